import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startApi, type ApiServer } from "#test/api-server.js";
import { describeBrowser, launchChromium, screenshot, seedDemo } from "#test/browser.js";

/**
 * The dashboard in Debian's Chromium against a real `reins serve` server (SQLite) seeded by the demo:
 * what a person sees, and what their clicks do to the API.
 */

let api: ApiServer;
let browser: Browser;
let context: BrowserContext | null = null;
const demoScope = (agent: string) => `session:demo-${agent}-t`;
const enc = encodeURIComponent;

beforeAll(async () => {
  [api, browser] = await Promise.all([startApi(), launchChromium()]);
  await seedDemo(api);
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** Script errors and console errors of the current test's page: none are expected. */
let pageErrors: string[] = [];

afterEach(async () => {
  await context?.close();
  context = null;
  const errors = pageErrors;
  pageErrors = [];
  expect(errors).toEqual([]);
});

/**
 * A fresh tab on the dashboard, 1400 px wide unless `width` says; `token` puts the API token in its
 * sessionStorage first, `script` runs before the page's own.
 */
async function open(
  hash = "",
  options: { token?: boolean; script?: string; width?: number } = {},
): Promise<{ page: Page; dialogs: string[] }> {
  context = await browser.newContext({ viewport: { width: options.width ?? 1400, height: 1000 } });
  if (options.token === true)
    await context.addInitScript(`sessionStorage.setItem("reins.apiToken", ${JSON.stringify(api.token)})`);
  if (options.script !== undefined) await context.addInitScript(options.script);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    // The one refusal a test provokes on purpose (no token yet) is the server's 401, not a script error.
    if (message.type() === "error" && !message.text().includes("401")) pageErrors.push(message.text());
  });
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(`${api.url}/${hash}`);
  return { page, dialogs };
}

/** A label the chart painted on its canvas, as the box of its ink in canvas pixels. */
interface PaintedLabel {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * Records the time-axis labels uPlot paints (centred, hung from the top: the x axis), one list per frame
 * (a clear of the whole canvas starts one), in `window.paintedLabels`.
 */
const recordTimeLabels = `
  window.paintedLabels = [];
  const proto = CanvasRenderingContext2D.prototype;
  const clearRect = proto.clearRect;
  proto.clearRect = function (x, y, w, h) {
    if (x === 0 && y === 0 && w === this.canvas.width && h === this.canvas.height) window.paintedLabels.push([]);
    return clearRect.call(this, x, y, w, h);
  };
  const fillText = proto.fillText;
  proto.fillText = function (text, x, y, ...rest) {
    const frame = window.paintedLabels.at(-1);
    if (frame !== undefined && text !== "" && this.textAlign === "center" && this.textBaseline === "top") {
      const m = this.measureText(text);
      frame.push({
        text,
        left: x - m.actualBoundingBoxLeft,
        right: x + m.actualBoundingBoxRight,
        top: y - m.actualBoundingBoxAscent,
        bottom: y + m.actualBoundingBoxDescent,
      });
    }
    return fillText.call(this, text, x, y, ...rest);
  };
`;

/** Pairs of labels whose boxes overlap, as text for the failure message. */
function overlapping(labels: PaintedLabel[]): string[] {
  const hits: string[] = [];
  labels.forEach((a, i) =>
    labels.slice(i + 1).forEach((b) => {
      const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
      if (!apart) hits.push(`"${a.text}" [${a.left}, ${a.right}] over "${b.text}" [${b.left}, ${b.right}]`);
    }),
  );
  return hits;
}

const row = (page: Page, table: string, scope: string) =>
  page.locator(`[data-testid=${table}] tr[data-scope="${scope}"]`);

describeBrowser("dashboard", () => {
  it("the overview lists the demo sessions with their budgets, breakers and alerts, sorted and filtered by the server", async () => {
    const { page } = await open();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    await page.locator(`[data-testid=sessions-table] tr[data-scope="${demoScope("burst")}"]`).waitFor();
    const rows: (string | null)[] = [];
    for (const tr of await page.locator("[data-testid=sessions-table] tbody tr").all())
      rows.push(await tr.getAttribute("data-scope"));
    expect(rows.sort()).toEqual(
      ["alternating", "burst", "healthy", "red-claim", "stuck", "thrashing"].map(demoScope).sort(),
    );
    await expect(
      row(page, "sessions-table", demoScope("burst")).locator("[data-testid=budget-status]").innerText(),
    ).resolves.toContain("paused");
    await row(page, "breakers-table", demoScope("stuck")).waitFor();
    await page.locator("[data-testid=card-sessions]").getByText("of 6 sessions").waitFor();
    await page.locator("[data-testid=alerts] li").first().waitFor();
    await page.locator("[data-testid=spend-chart] canvas").waitFor();
    await page.locator("[data-testid=live-status]").getByText("live").waitFor();
    await screenshot(page, "overview");

    // Sorting and filtering are the server's: the page asks for them and shows what comes back.
    const firstRow = page.locator("[data-testid=sessions-table] tbody tr").first();
    const first = () => firstRow.getAttribute("data-scope");
    await page.getByRole("button", { name: "Tokens" }).click();
    await expect.poll(first).toBe(demoScope("burst"));
    await page.getByRole("button", { name: /Tokens/ }).click();
    await expect.poll(first).not.toBe(demoScope("burst"));
    await page.getByLabel("Budget status").selectOption("paused");
    await page.getByText("1–1 of 1").waitFor();
    expect(await firstRow.getAttribute("data-scope")).toBe(demoScope("burst"));
    await page.getByLabel("Filter sessions").fill("stuck");
    await page.getByText("none", { exact: true }).waitFor();

    // Every list request is a bounded page: never everything at once.
    const lists = requests.filter((u) => /\/api\/(sessions|budgets|circuits|alerts)\?/.test(u));
    expect(lists.some((u) => u.includes("sort=tokens&order=desc"))).toBe(true);
    expect(lists.some((u) => u.includes("status=paused"))).toBe(true);
    for (const u of lists) expect(Number(new URL(u).searchParams.get("limit")), u).toBeLessThanOrEqual(25);
  });

  it("the spend chart's time labels never overlap, on a wide screen or a narrow one", async () => {
    for (const width of [1400, 1000, 700, 480]) {
      const { page } = await open("", { script: recordTimeLabels, width });
      await page.locator("[data-testid=spend-chart] canvas").waitFor();
      const frames = () => page.evaluate<PaintedLabel[][]>("window.paintedLabels");
      await expect.poll(async () => (await frames()).at(-1)?.length ?? 0).toBeGreaterThan(2);
      const painted = await frames();
      // The first label names the date: it is still drawn, and the labels after it make room for it.
      expect(painted.at(-1)!.some((label) => /\d+\/\d+\/\d+/.test(label.text))).toBe(true);
      for (const [i, labels] of painted.entries())
        expect(overlapping(labels), `${width}px, frame ${i}`).toEqual([]);
      await context!.close();
      context = null;
    }
  });

  it("acknowledging a tripped breaker turns it half-open in the page and in the API; its alert is acked by name", async () => {
    const stuck = demoScope("stuck");
    const { page } = await open("", { token: true });
    // With a token the stream goes through fetch, which can send it (what a server off loopback needs).
    await page.locator("[data-testid=live-status]").getByText("live").waitFor();
    const breaker = row(page, "breakers-table", stuck);
    await breaker.getByRole("button", { name: "Acknowledge…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Reason (optional)").fill("looked at the loop; let it probe once");
    await dialog.getByLabel("Your name").fill("ana");
    await dialog.getByRole("button", { name: "Acknowledge" }).click();
    await page.getByRole("status").getByText("half-open").waitFor();
    // The open-breakers list no longer has it; the half-open one does.
    await breaker.waitFor({ state: "detached" });
    await page.getByLabel("Breakers shown").selectOption("half_open");
    await row(page, "breakers-table", stuck)
      .locator("[data-testid=breaker-status]")
      .getByText("half-open")
      .waitFor();
    const circuit = await api.call("GET", `/api/circuits/${enc(stuck)}`);
    expect(circuit.json.status).toBe("half_open");
    // The trip's alert, acknowledged from the alerts panel, by the name given in the dialog.
    const alert = page.locator("[data-testid=alerts] li", { hasText: "circuit-tripped" });
    await alert.getByRole("button", { name: "Ack" }).click();
    await alert.waitFor({ state: "detached" });
    const alerts = await api.call("GET", `/api/alerts?budget_id=${enc(stuck)}&acknowledged=true`);
    expect(alerts.json.items).toContainEqual(
      expect.objectContaining({ kind: "circuit_tripped", acknowledgedBy: "ana" }),
    );
    // The token-carrying stream brings new sessions in too.
    const at = Date.now();
    await api.call("POST", "/api/events", {
      events: [
        { kind: "session.started", scope: "session:via-fetch", at, agent: "claude", id: `fetch-${at}` },
      ],
    });
    await row(page, "sessions-table", "session:via-fetch").waitFor();
    await screenshot(page, "breaker-acknowledged");
  });

  it("extending a paused budget asks for the token once, shows a refusal, and with a reason makes it active", async () => {
    const burst = demoScope("burst");
    const { page } = await open(`#/session/${enc(burst)}`);
    await page.locator("[data-testid=budget-status]").getByText("paused").waitFor();
    await page.getByRole("button", { name: "Extend budget…" }).click();
    const extend = page.getByRole("dialog", { name: /Extend the budget/ });
    await extend.getByLabel("Amount").fill("500000");
    await extend.getByLabel("Reason").fill("the summary job is expected to be large");
    await extend.getByRole("button", { name: "Extend" }).click();
    // No token yet: the server answers 401 and the page asks for it; declining shows the refusal.
    const ask = page.getByRole("dialog", { name: "API token" });
    await ask.getByRole("button", { name: "Cancel" }).click();
    await extend.getByRole("alert").getByText("401 unauthorized").waitFor();
    await extend.getByRole("button", { name: "Extend" }).click();
    await ask.getByLabel("Token").fill(api.token);
    await ask.getByRole("button", { name: "Use token" }).click();
    await extend.waitFor({ state: "detached" });
    await page.locator("[data-testid=budget-status]").getByText("active").waitFor();
    await page
      .locator("[data-testid=human-actions]")
      .getByText("the summary job is expected to be large")
      .waitFor();
    expect(await page.evaluate('sessionStorage.getItem("reins.apiToken")')).toBe(api.token);
    const budget = await api.call("GET", `/api/budgets/${enc(burst)}`);
    expect(budget.json.status).toBe("active");
    await screenshot(page, "budget-extended");
  });

  it("a new event posted to the API appears without a reload, also after the stream dropped", async () => {
    const healthy = demoScope("healthy");
    const { page } = await open(`#/session/${enc(healthy)}`);
    await page.locator("[data-testid=live-status]").getByText("live").waitFor();
    await page.locator("[data-testid=timeline] tbody tr").first().waitFor();
    const navigations: string[] = [];
    page.on("framenavigated", (f) => navigations.push(f.url()));
    const at = Date.now();
    const posted = await api.call("POST", "/api/events", {
      events: [
        {
          kind: "tool.requested",
          scope: healthy,
          at,
          tool: "Bash",
          inputHash: "live1",
          command: "echo appeared-live",
          id: `live-${at}`,
        },
        { kind: "session.started", scope: "session:live-newcomer", at, agent: "codex", id: `live-new-${at}` },
      ],
    });
    expect(posted.status).toBe(200);
    await page.locator("[data-testid=timeline]").getByText("Bash echo appeared-live").waitFor();
    // The stream drops (the server closes every connection): it reconnects by itself, and what was
    // written meanwhile shows.
    api.app.server.closeAllConnections();
    await page.locator("[data-testid=live-status]").getByText("reconnecting").waitFor();
    const gap = Date.now();
    await api.call("POST", "/api/events", {
      events: [
        {
          kind: "tool.requested",
          scope: healthy,
          at: gap,
          tool: "Bash",
          inputHash: "gap1",
          command: "echo while-away",
          id: `gap-${gap}`,
        },
      ],
    });
    await page.locator("[data-testid=live-status]").getByText("live").waitFor();
    await page.locator("[data-testid=timeline]").getByText("Bash echo while-away").waitFor();
    // Cutting every connection is the one error this test causes on purpose: the stream ends mid-chunk, and
    // a request the page had in flight at that moment (a reload after the live record) loses its socket.
    const cut = [
      "ERR_INCOMPLETE_CHUNKED_ENCODING",
      "ERR_SOCKET_NOT_CONNECTED",
      "ERR_CONNECTION_RESET",
      "ERR_EMPTY_RESPONSE",
    ];
    pageErrors = pageErrors.filter((e) => !cut.some((c) => e.includes(c)));
    await page.goto(`${api.url}/#/`); // a hash change, not a reload of the app
    await row(page, "sessions-table", "session:live-newcomer").waitFor();
    const later = Date.now();
    await api.call("POST", "/api/events", {
      events: [
        {
          kind: "session.started",
          scope: "session:live-second",
          at: later,
          agent: "gemini",
          id: `live-2-${later}`,
        },
      ],
    });
    await row(page, "sessions-table", "session:live-second").waitFor();
    expect(navigations.filter((u) => !u.includes("#"))).toEqual([]);
    await screenshot(page, "live");
  });

  it("agent-written text renders as text and runs nothing", async () => {
    const evil = "<img src=x onerror=alert(1)>";
    const scope = `session:xss-${evil}`;
    const at = Date.now();
    const ingest = await api.call("POST", "/api/events", {
      events: [
        { kind: "session.started", scope, at, agent: evil, id: "x0" },
        {
          kind: "tool.requested",
          scope,
          at: at + 1,
          tool: "Bash",
          inputHash: "h1",
          command: `echo ${evil}`,
          id: "x1",
        },
        {
          kind: "tool.requested",
          scope,
          at: at + 2,
          tool: evil,
          inputHash: "h2",
          writes: [`src/${evil}.ts`],
          id: "x2",
        },
      ],
    });
    expect(ingest.status).toBe(200);
    const { page, dialogs } = await open();
    await row(page, "sessions-table", scope).getByText(evil).first().waitFor();
    await page.locator("[data-testid=spend-chart] .u-legend").getByText(`xss-${evil}`).waitFor();
    expect(await page.locator("img").count()).toBe(0);
    await page.goto(`${api.url}/#/session/${enc(scope)}`);
    await page.locator("[data-testid=timeline]").getByText(`Bash echo ${evil}`).waitFor();
    await page.locator("[data-testid=timeline]").getByText(`src/${evil}.ts`).waitFor();
    await expect(page.locator("[data-testid=session-title]").innerText()).resolves.toBe(scope);
    expect(await page.locator("img").count()).toBe(0);
    expect(dialogs).toEqual([]);
    await screenshot(page, "untrusted-text");
  });
});
