import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { ScopeView } from "../web/src/types.js";
import { startApi, type ApiServer } from "#test/api-server.js";
import { describeBrowser, launchChromium, seedDemo } from "#test/browser.js";
import { provenRun } from "#test/runs.js";

/**
 * Frictions a person met on the project dashboard, each fixed and held here in Chromium: sessions just
 * recorded read as a quarter of an hour old, a session shown "active" with its breaker open, a run's page
 * with no word on whether each task's change was witnessed, and "$0.00" where no price is known.
 */

let demo: ApiServer;
let unpriced: ApiServer;
let browser: Browser;
let context: BrowserContext | null = null;
const errors: string[] = [];

beforeAll(async () => {
  [demo, unpriced, browser] = await Promise.all([
    startApi(),
    // A USD budget, so the table has a USD column to show; a model reins has no price for.
    startApi({ config: { budget: { session: { usd: 5 } }, prices: {} } }),
    launchChromium(),
  ]);
  await seedDemo(demo);
  await demo.services.store.saveRun(provenRun(Date.now()));
  const at = Date.now();
  const posted = await unpriced.call("POST", "/api/events", {
    events: [
      { kind: "session.started", scope: "session:free", at, agent: "claude", id: "s1" },
      { kind: "usage.recorded", scope: "session:free", at, inputTokens: 4_000, model: "mystery-1", id: "u1" },
    ],
  });
  if (posted.status !== 200) throw new Error(`the events were refused: ${posted.text}`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await demo?.close();
  await unpriced?.close();
});

afterEach(async () => {
  await context?.close();
  context = null;
  expect(errors.splice(0)).toEqual([]);
});

async function open(url: string): Promise<Page> {
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
  await page.goto(url);
  return page;
}

const row = (page: Page, scope: string) =>
  page.locator(`[data-testid=sessions-table] tr[data-scope="${scope}"]`);

describeBrowser("dashboard frictions", () => {
  it("shows the sessions the demo just recorded as seconds old, not minutes", async () => {
    const listed = await demo.call("GET", "/api/sessions?sort=lastAt&order=desc&limit=1");
    const latest = (listed.json as { items: ScopeView[] }).items[0]!;
    // The demo's time ends in the minute before it ran (it used to end 4 to 15 minutes before).
    expect(Date.now() - latest.lastAt!).toBeLessThan(90_000);
    const page = await open(`${demo.url}/`);
    const cell = row(page, latest.scope).locator("td").nth(9);
    await expect(cell.innerText()).resolves.toMatch(/^(\d{1,2}s|1m) ago$/);
  });

  it("shows a session whose breaker is open as stopped, never active", async () => {
    const page = await open(`${demo.url}/`);
    const status = row(page, "session:demo-stuck-t").locator("[data-testid=budget-status]");
    await expect(status.innerText()).resolves.toBe("stopped breaker open");
    // A session whose breaker is closed still shows its budget's status.
    await expect(
      row(page, "session:demo-healthy-t").locator("[data-testid=budget-status]").innerText(),
    ).resolves.toMatch(/^active/);
    // And its own page says so first.
    await page.goto(`${demo.url}/#/session/${encodeURIComponent("session:demo-stuck-t")}`);
    await expect(page.locator("[data-testid=session-state]").innerText()).resolves.toBe(
      "stopped breaker open",
    );
  });

  it("says on a run's page whether each task's change was witnessed", async () => {
    const page = await open(`${demo.url}/#/runs/run-proven`);
    await page.locator("[data-testid=run-tree] th", { hasText: "Witnessed" }).waitFor();
    const witnessed = (node: string) =>
      page.locator(`[data-testid=run-tree] tr[data-node="${node}"] [data-testid=node-witnessed]`).innerText();
    await expect(witnessed("t-lex")).resolves.toBe("yes");
    await expect(witnessed("s-nodes")).resolves.toBe("yes");
    await expect(witnessed("s-errors")).resolves.toBe("already done");
    await expect(witnessed("m-core")).resolves.toBe("");
    await expect(
      page
        .locator(`[data-testid=run-tree] tr[data-node="t-lex"] [data-testid=node-witnessed] .badge`)
        .getAttribute("title"),
    ).resolves.toBe("red with its change set aside: unit");
  });

  it('shows "no price" where tokens were spent and no price is known, never $0.00', async () => {
    const page = await open(`${unpriced.url}/`);
    const free = row(page, "session:free");
    await free.waitFor();
    await expect(free.locator("td").nth(5).innerText()).resolves.toBe("no price");
    await expect(page.locator("[data-testid=spend-cost]").innerText()).resolves.toBe("no price");
    await expect(page.locator("main").innerText()).resolves.not.toContain("$0.00");
  });
});
