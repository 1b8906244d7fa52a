/** Browser tests on Debian's Chromium: skipped without it, except under CI. */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { describe } from "vitest";
import { demo, demoStartBefore } from "../../src/cli/demo.js";
import { memoryIo } from "../../src/cli/io.js";
import { ReinsError } from "../../src/base/core/errors.js";
import type { ApiServer } from "./api-server.js";

/** Debian's Chromium (`apt-get install chromium`); the tests never download a browser. */
export const CHROMIUM = process.env.REINS_CHROMIUM ?? "/usr/bin/chromium";

const artifacts = join(import.meta.dirname, "..", "..", "artifacts", "dashboard");

/**
 * `describe` for browser tests: skipped with a message when Chromium is missing, except under CI=true,
 * where a missing browser fails the run instead of hiding it.
 */
export function describeBrowser(name: string, body: () => void): void {
  if (existsSync(CHROMIUM) || process.env.CI === "true") {
    describe(name, body);
    return;
  }
  console.warn(`skipping "${name}": no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  describe.skip(name, body);
}

/** Launches the Chromium at CHROMIUM headless; fails clearly when it is not there. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it with apt-get install -y chromium (CI=true needs it)`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // A launch took over 20 s once while the whole suite loaded both cores (CI 2026-12-01); a hung one still fails.
    timeout: 60_000,
    // Root in a container has no user namespaces for the sandbox; the pages are our own. The machine has no
    // network: Chromium's own background connections are turned off rather than refused at every start.
    args: [
      "--no-sandbox",
      "--disable-dev-shm-usage",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

/** Saves a full-page screenshot under artifacts/dashboard/. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Runs `reins demo`'s scripted agents into the server's store, ending now as the CLI does; returns their scopes. */
export async function seedDemo(api: ApiServer, run = "t"): Promise<string[]> {
  const { store, policy } = api.services;
  const scopes: string[] = [];
  const start = await demoStartBefore(Date.now(), policy);
  const code = await demo(memoryIo(), policy, {
    start,
    run,
    backend: (scope) => {
      scopes.push(scope);
      return async (event) => {
        const answer = (await store.append(scope, [event], policy)).answers[0];
        if (answer === null || answer === undefined) throw new ReinsError("invalid_event", "not applied");
        return answer;
      };
    },
  });
  if (code !== 0) throw new Error(`the demo exited with ${code}`);
  return scopes;
}
