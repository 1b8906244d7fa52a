import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { projectId } from "../src/base/config/project-registry.js";
import { apiToken } from "../src/base/config/hook-secret.js";
import { describeBrowser, launchChromium, screenshot } from "#test/browser.js";
import { reinsBin } from "#test/processes.js";
import { twoProjects, type TwoProjects } from "#test/two-projects.js";

/**
 * `reins serve --all` in a process of its own, seen in Debian's Chromium: the user-level page with two
 * projects served by one hook daemon, and each project's own dashboard under /p/<id>/.
 */

let two: TwoProjects;
let browser: Browser;
let server: ChildProcess;
let url = "";
/** A tab left on a project's dashboard, its event stream open, while the server is told to stop. */
let left: BrowserContext | null = null;
const errors: string[] = [];

/** Starts `reins serve --all --port 0` and waits for the line that names its address. */
function serveAll(env: Record<string, string>, cwd: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [reinsBin, "serve", "--all", "--port", "0"], { cwd, env });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const found = /serving every project on (http:\/\/[^ ]+?)\/ /.exec(out)?.[1];
      if (found !== undefined) resolve({ child, url: found });
    });
    child.on("exit", (code) => reject(new Error(`reins serve --all exited ${code}: ${out}${err}`)));
  });
}

beforeAll(async () => {
  two = await twoProjects();
  [browser, { child: server, url }] = await Promise.all([launchChromium(), serveAll(two.env, two.alpha)]);
}, 60_000);

afterAll(async () => {
  // The pages' errors are judged as they were while the server ran: once it stops, the tab left open retries
  // its event stream and the browser logs each refused connection, which is the stop working, not a fault.
  const seen = [...errors];
  // It stops on SIGTERM even with a project's event stream open in a tab.
  if (server?.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  await left?.close();
  await browser?.close();
  await two?.close();
  expect(seen).toEqual([]);
});

describeBrowser("reins serve --all", () => {
  it("shows both projects, the stopped session and its breaker's release, and links into each project's dashboard", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
    await page.goto(`${url}/`);
    const section = (root: string) => page.locator(`[data-testid=project][data-root="${root}"]`);
    await section(two.alpha)
      .locator("[data-testid=project-sessions] tr[data-scope='session:alpha-1']")
      .waitFor();
    await section(two.beta).locator("[data-testid=project-breakers] li").waitFor();
    await expect(page.locator("[data-testid=project]").count()).resolves.toBe(2);
    await expect(page.locator("[data-testid=daemon-line]").innerText()).resolves.toMatch(
      /hook daemon running \(pid \d+\), 2 project\(s\) open/,
    );
    const alpha = section(two.alpha);
    await expect(alpha.locator("[data-testid=session-state]").innerText()).resolves.toBe("active");
    await expect(alpha.locator("[data-testid=project-cost]").innerText()).resolves.toBe("no price");
    const beta = section(two.beta);
    await expect(beta.locator("[data-testid=session-state]").innerText()).resolves.toBe(
      "stopped breaker open",
    );
    await expect(beta.locator("[data-testid=project-cost]").innerText()).resolves.toBe("$0.25");
    await expect(beta.locator("[data-testid=project-breakers] code").innerText()).resolves.toBe(
      `reins -C ${two.beta} circuit reset session:beta-1 --reason "<why>"`,
    );
    await expect(beta.locator("[data-testid=project-summary]").innerText()).resolves.toContain("1 stopped");
    const shot = await screenshot(page, "all-projects");
    if (process.env.REINS_DOCS_SCREENSHOTS === "1")
      copyFileSync(shot, join(import.meta.dirname, "..", "docs", "all-projects.png"));

    // Into alpha's own dashboard, served under /p/<id>/ by its own server.
    await alpha.locator("[data-testid=project-link]").click();
    await page.waitForURL(`${url}/p/${projectId(two.alpha, two.env)}/`);
    await page.locator(`[data-testid=sessions-table] tr[data-scope="session:alpha-1"]`).waitFor();
    await expect(page.locator("[data-testid=sessions-table] tbody tr").count()).resolves.toBe(1);
    await page.locator("[data-testid=live-status]").getByText("live").waitFor();
    // And back to every project.
    await page.locator("[data-testid=all-projects-link]").click();
    await page.waitForURL(`${url}/`);
    await page.locator("[data-testid=project]").first().waitFor();
    await page.goto(`${url}/p/${projectId(two.beta, two.env)}/`);
    await page.locator("[data-testid=live-status]").getByText("live").waitFor();
    left = context;
  });

  it("keeps each project's own rules under /p/<id>/: actions take its people's token, and no hook is answered", async () => {
    const base = `${url}/p/${projectId(two.beta, two.env)}`;
    const reset = (token: string | null) =>
      fetch(`${base}/api/circuits/${encodeURIComponent("session:beta-1")}/reset`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ reason: "seen on the all-projects page", by: "test" }),
      });
    expect((await reset(null)).status).toBe(401);
    expect((await reset(apiToken(two.alpha).value)).status).toBe(401);
    const done = await reset(apiToken(two.beta).value);
    expect(done.status).toBe(200);
    expect(((await done.json()) as { status: string }).status).toBe("closed");
    const hook = await fetch(`${base}/hooks/claude`, { method: "POST", body: "{}" });
    expect(hook.status).toBe(404);
    expect((await fetch(`${url}/p/0000000000000000/`)).status).toBe(404);
    const view = (await (await fetch(`${url}/api/all`)).json()) as {
      projects: { root: string; breakers: unknown[] }[];
    };
    expect(view.projects.find((p) => p.root === two.beta)?.breakers).toEqual([]);
  });
});
