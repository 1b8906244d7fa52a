import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startApi, type ApiServer } from "#test/api-server.js";
import { describeBrowser, launchChromium, screenshot } from "#test/browser.js";
import { PAUSED_BECAUSE, driveRun, pausedRun, provenRun, storedRun } from "#test/runs.js";

/**
 * The dashboard's Runs page in Debian's Chromium against a real `reins serve` server (SQLite), with runs
 * saved into its store as `reins run` saves them: checkpoints of states the control core reached.
 */

let api: ApiServer;
let browser: Browser;
let context: BrowserContext | null = null;
const now = Date.now();
const enc = encodeURIComponent;

beforeAll(async () => {
  [api, browser] = await Promise.all([
    startApi({ config: { budget: { session: { tokens: 50_000 } } } }),
    launchChromium(),
  ]);
  const { store } = api.services;
  await store.saveRun(provenRun(now - 2 * 3_600_000));
  await store.saveRun(pausedRun(now - 5 * 60_000));
  // The paused run's guard scope, over its budget: what its page tells a person to act on.
  const posted = await api.call("POST", "/api/events", {
    events: [
      { kind: "session.started", scope: "run:run-paused", at: now - 600_000, agent: "claude", id: "g0" },
      { kind: "usage.recorded", scope: "run:run-paused", at: now - 400_000, inputTokens: 60_000, id: "g1" },
    ],
  });
  expect(posted.status).toBe(200);
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

let pageErrors: string[] = [];
/** Console errors a test provokes on purpose (a 404 it asks for). */
let expected: RegExp | null = null;

afterEach(async () => {
  await context?.close();
  context = null;
  const errors = pageErrors;
  pageErrors = [];
  expected = null;
  expect(errors).toEqual([]);
});

/** A fresh tab on the dashboard; every dialog is recorded and dismissed (none are expected). */
async function open(hash = ""): Promise<{ page: Page; dialogs: string[] }> {
  context = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" && !(expected?.test(message.text()) ?? false))
      pageErrors.push(message.text());
  });
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(`${api.url}/${hash}`);
  return { page, dialogs };
}

const runRow = (page: Page, id: string) => page.locator(`[data-testid=runs-table] tr[data-run="${id}"]`);
const nodeRow = (page: Page, id: string) => page.locator(`[data-testid=run-tree] tr[data-node="${id}"]`);
const texts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();
/** An attribute of every element `selector` matches, in document order. */
const attrs = (page: Page, selector: string, ...names: string[]) =>
  page
    .locator(selector)
    .evaluateAll(
      (els: { getAttribute(name: string): string | null }[], names: string[]) =>
        els.map((el) => names.map((name) => el.getAttribute(name)).join(" ")),
      names,
    );

describeBrowser("dashboard: runs", () => {
  it("lists the runs newest first with status, plan, progress and spend, and shows a run saved later without a reload", async () => {
    const { page } = await open();
    await page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: "Runs" }).click();
    await runRow(page, "run-proven").waitFor();
    expect(page.url()).toContain("#/runs");
    await expect(
      page.getByRole("navigation").getByRole("link", { name: "Runs" }).getAttribute("aria-current"),
    ).resolves.toBe("page");
    const ids = () => attrs(page, "[data-testid=runs-table] tbody tr", "data-run");
    expect(await ids()).toEqual(["run-paused", "run-proven"]);

    const paused = runRow(page, "run-paused");
    const proven = runRow(page, "run-proven");
    await expect(paused.locator("[data-testid=run-status]").innerText()).resolves.toBe("paused");
    await expect(proven.locator("[data-testid=run-status]").innerText()).resolves.toBe("proven");
    await expect(proven.locator("[data-testid=run-tasks]").innerText()).resolves.toBe("3 of 3");
    await expect(paused.locator("[data-testid=run-tasks]").innerText()).resolves.toBe("0 of 3");
    const cells = await proven.locator("td").allInnerTexts();
    expect(cells.slice(0, 9)).toEqual([
      "run-proven",
      "proven",
      "plans/parser.yaml",
      "claude",
      "reins/run-proven",
      "3 of 3",
      "3",
      "48k",
      "$0.20",
    ]);
    expect(cells[9]).toBe("2h ago");
    await screenshot(page, "runs");

    // A driver saves a new run straight into the store: the page polls, so it shows up on top.
    const live = driveRun({
      run: "run-live",
      at: Date.now(),
      checks: [],
      outline: [{ id: "a", kind: "task" }],
      scripts: {},
      stopAfter: 0,
    });
    await api.services.store.saveRun(storedRun(live, Date.now()));
    await expect.poll(ids, { timeout: 10_000 }).toEqual(["run-live", "run-paused", "run-proven"]);
    await expect(runRow(page, "run-live").locator("[data-testid=run-status]").innerText()).resolves.toBe(
      "running",
    );
  });

  it("a proven run shows its task tree in plan order, each task's figures and checks, and the done proof", async () => {
    const { page, dialogs } = await open("#/runs");
    await runRow(page, "run-proven").getByRole("link", { name: "run-proven" }).click();
    await nodeRow(page, "s-errors").waitFor();
    expect(page.url()).toContain("#/runs/run-proven");
    await expect(page.locator("[data-testid=run-status]").innerText()).resolves.toBe("proven");

    // The tree: modules → components → tasks → subtasks, in plan order, each a level deeper.
    expect(await attrs(page, "[data-testid=run-tree] tbody tr", "data-node", "aria-level")).toEqual([
      "m-core 1",
      "c-parse 2",
      "t-lex 3",
      "t-tree 3",
      "s-nodes 4",
      "s-errors 4",
    ]);
    expect(await texts(page, "[data-testid=run-tree] [data-testid=node-status]")).toEqual(
      Array(6).fill("done"),
    );
    await nodeRow(page, "m-core").getByText("3 of 3 done").waitFor();
    const nodes = nodeRow(page, "s-nodes");
    // Red once, fixed in a second attempt: its last checks are green, and its commit is shown short.
    await expect(nodes.locator("td").nth(2).innerText()).resolves.toBe("2");
    await expect(nodes.locator("code[title]").innerText()).resolves.toMatch(/^[0-9a-f]{7}$/);
    await expect(nodes.locator("[data-check=unit] .outcome").innerText()).resolves.toBe("passed");
    await nodeRow(page, "s-errors").locator(".marker", { hasText: "no-op" }).waitFor();
    await expect(nodeRow(page, "s-errors").locator("code[title]").count()).resolves.toBe(0);

    // Titles are text: the markup in them is shown, never made into elements.
    await expect(nodeRow(page, "t-tree").locator(".title").innerText()).resolves.toBe(
      `Syntax tree <script>alert("tree")</script>`,
    );
    await expect(nodes.locator(".title").innerText()).resolves.toBe("Nodes <img src=x onerror=alert(1)>");
    expect(await page.locator("main img, main script").count()).toBe(0);

    const proof = page.locator("[data-testid=run-proof]");
    await proof.getByText("Every clause holds").waitFor();
    expect(await attrs(page, "[data-testid=run-proof] li", "data-clause")).toEqual([
      "no_runnable_task",
      "nothing_in_flight",
      "no_retry_pending",
      "graph_stable",
      "every_task_terminal",
      "every_change_witnessed",
      "judges_untouched",
      "changed_judges_approved",
      "every_hunk_witnessed",
      "report_written",
    ]);
    expect(await texts(page, "[data-testid=run-proof] li .outcome")).toEqual(Array(10).fill("holds"));
    await proof.getByText("all 3 tasks are terminal").waitFor();
    expect(await page.locator("[data-testid=run-paused]").count()).toBe(0);
    expect(dialogs).toEqual([]);
    await screenshot(page, "run-proven");
  });

  it("a paused run shows why, what to type to go on (from its guard scope now), its red checks, and a __proto__ id as text", async () => {
    const { page, dialogs } = await open(`#/runs/run-paused`);
    await nodeRow(page, "t-list").waitFor();
    await expect(page.locator("[data-testid=run-status]").innerText()).resolves.toBe("paused");
    await expect(page.locator("[data-testid=paused-reason]").innerText()).resolves.toBe(PAUSED_BECAUSE);
    const goOn = () => texts(page, "[data-testid=go-on] li");
    expect(await goOn()).toEqual([
      'reins budget extend run:run-paused <tokens> --reason "..."',
      "reins run --resume run-paused",
    ]);

    // The task at work: fix-only after a red check, whose failing tests are listed by name.
    const list = nodeRow(page, "t-list");
    await expect(list.locator("[data-testid=node-status]").innerText()).resolves.toBe("in-progress");
    await list.locator(".marker", { hasText: "fix-only" }).waitFor();
    await expect(list.locator("[data-check=unit] .outcome").innerText()).resolves.toBe("failed");
    expect(
      await list.getByRole("list", { name: "failing tests of unit" }).locator("li").allInnerTexts(),
    ).toEqual(["lists newest first", "shows the <em>badge</em>"]);
    await expect(nodeRow(page, "t-drop").locator("[data-testid=node-reason]").innerText()).resolves.toBe(
      "canceled by ana: not needed after all",
    );
    await expect(nodeRow(page, "t-drop").locator("[data-testid=node-status]").innerText()).resolves.toBe(
      "canceled",
    );

    // An id no plan may have, from a forged checkpoint: a row like any other, its markup shown as text.
    const proto = nodeRow(page, "__proto__");
    await expect(proto.locator(".title").innerText()).resolves.toBe("<b>prototype</b>");
    await expect(proto.locator("code").first().innerText()).resolves.toBe("__proto__");
    expect(await page.locator("main b, main em").count()).toBe(0);

    // Finished without proof: the clauses that fail name what breaks them.
    const proof = page.locator("[data-testid=run-proof]");
    await proof.getByText("Not every clause holds").waitFor();
    await proof.locator('[data-clause="every_task_terminal"]').getByText("__proto__ (pending)").waitFor();
    await expect(proof.locator('[data-clause="every_task_terminal"] .outcome').innerText()).resolves.toBe(
      "fails",
    );
    await screenshot(page, "run-paused");

    // A person extends the run's budget: the page, polling, now only says to resume.
    const extended = await api.call("POST", `/api/budgets/${enc("run:run-paused")}/extend`, {
      additional_tokens: 100_000,
      reason: "the web module needs more",
      by: "ana",
    });
    expect(extended.json.status).toBe("active");
    await expect.poll(goOn, { timeout: 10_000 }).toEqual(["reins run --resume run-paused"]);
    expect(dialogs).toEqual([]);
  });

  it("a run the store does not have, and a checkpoint reins did not write, are messages", async () => {
    expected = /404/;
    const { page } = await open("#/runs/run-none");
    await page.getByRole("alert").getByText('404 not_found: no run "run-none" in the store').waitFor();
    await api.services.store.saveRun({
      id: "run-forged",
      status: "running",
      updatedAt: Date.now() - 3_600_000 * 48,
      summary: { plan: "<i>forged</i>.yaml" },
      checkpoint: { state: { order: ["a"], nodes: { a: { parent: "a", children: ["a"] } } } },
    });
    await page.goto(`${api.url}/#/runs/run-forged`);
    await page.getByRole("alert").getByText("its checkpoint is not one reins wrote").waitFor();
    await page.getByText("<i>forged</i>.yaml").waitFor();
    expect(await page.locator("[data-testid=run-tree]").count()).toBe(0);
  });
});
