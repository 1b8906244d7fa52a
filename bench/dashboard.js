// Dashboard benchmarks: the built app's size as served (gzip), and the time to first render of the
// overview (cards, the first page of the sessions table) with 1,000 sessions and 100,000 events in a
// real `reins serve` (SQLite), measured in Debian's Chromium. Baseline in the same run: the same page
// load of a static page with no data (what the browser and server cost before the dashboard does anything).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
/* global document */
import { chromium } from "playwright-core";
import { resolvePolicy } from "../dist/base/core/index.js";
import { defaultStorePath, openStore } from "../dist/base/store/open.js";
import { median, quantile } from "./stats.js";
import { workload } from "./workload.js";

const web = join(import.meta.dirname, "..", "dist", "web");
const bin = join(import.meta.dirname, "..", "bin", "reins.js");
const CHROMIUM = process.env.REINS_CHROMIUM ?? "/usr/bin/chromium";
const TOKEN = "bench-token-0123456789abcdef";
const SESSIONS = 1_000;
const EVENTS = 100;
const ROUNDS = 9;

/** Gzipped bytes (level 9) of the page and every script and stylesheet, and of what the first render needs. */
function appSize() {
  const html = readFileSync(join(web, "index.html"), "utf8");
  const first = new Set([...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]));
  const files = [
    "index.html",
    ...readdirSync(join(web, "assets"))
      .filter((f) => /\.(js|css)$/.test(f))
      .map((f) => `assets/${f}`),
  ];
  const size = { raw: 0, gz: 0, firstGz: 0, files: files.length };
  for (const f of files) {
    const body = readFileSync(join(web, f));
    const gz = gzipSync(body, { level: 9 }).length;
    size.raw += body.length;
    size.gz += gz;
    if (f === "index.html" || first.has(f)) size.firstGz += gz;
  }
  return size;
}

/** A project whose store holds SESSIONS sessions of EVENTS events each, spread over the last hours. */
async function seed() {
  const root = mkdtempSync(join(tmpdir(), "reins-bench-dash-"));
  writeFileSync(join(root, "reins.config.json"), "{}");
  mkdirSync(join(root, ".reins"), { recursive: true });
  const store = await openStore(`sqlite:${defaultStorePath(root)}`, root);
  const policy = resolvePolicy({});
  const base = workload(EVENTS, "session:x");
  const shift = Date.now() - 8 * 3_600_000 - base[0].at;
  for (let i = 0; i < SESSIONS; i++) {
    const scope = `session:bench-${String(i).padStart(4, "0")}`;
    const offset = shift + i * 25_000;
    await store.append(
      scope,
      base.map((e) => ({ ...e, scope, at: e.at + offset })),
      policy,
    );
  }
  await store.close();
  return root;
}

/** Starts `reins serve` on a free port; resolves with its URL and a stop function. */
function serve(root) {
  const child = spawn(process.execPath, [bin, "-C", root, "serve", "--port", "0"], {
    cwd: root,
    env: { ...process.env, REINS_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url !== undefined)
        resolve({
          url,
          stop: () =>
            new Promise((done) => {
              child.on("close", done);
              child.kill("SIGTERM");
            }),
        });
    });
    child.on("close", (code) => reject(new Error(`reins serve exited ${code}`)));
  });
}

/** Milliseconds from navigation start until `ready` holds in a fresh tab, ROUNDS times. */
async function loads(browser, url, ready) {
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction(ready, undefined, { timeout: 30_000, polling: "raf" });
    times.push(await page.evaluate(() => performance.now()));
    await context.close();
  }
  return times;
}

export async function dashboardBench(report) {
  if (!existsSync(join(web, "index.html"))) throw new Error("dist/web is missing: run npm run build");
  const size = appSize();
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  report("dashboard app, gzipped", kib(size.gz), {
    "loaded before the first render (page, entry script, styles; the chart's uPlot comes after)": kib(
      size.firstGz,
    ),
    raw: `${kib(size.raw)} in ${size.files} files`,
  });
  if (!existsSync(CHROMIUM)) {
    console.log(`dashboard first render: skipped (no Chromium at ${CHROMIUM}; apt-get install -y chromium)`);
    return;
  }

  const t0 = Date.now();
  const root = await seed();
  const seeded = Date.now() - t0;
  const server = await serve(root);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  try {
    // Server side alone: the requests the overview makes, timed from Node.
    const api = [];
    for (let r = 0; r < ROUNDS; r++) {
      const s = performance.now();
      await Promise.all(
        [
          "/api/overview",
          "/api/sessions?limit=25&offset=0&sort=lastAt&order=desc",
          "/api/circuits?limit=10&offset=0&breaker=open",
          "/api/alerts?acknowledged=false&limit=20",
        ].map((p) => fetch(`${server.url}${p}`).then((res) => res.arrayBuffer())),
      );
      api.push(performance.now() - s);
    }
    const rendered = await loads(
      browser,
      `${server.url}/`,
      () =>
        document.querySelectorAll("[data-testid=sessions-table] tbody tr").length >= 25 &&
        document.querySelector("[data-testid=card-sessions] .card-value") !== null,
    );
    const empty = await loads(browser, `${server.url}/healthz`, () => document.body !== null);
    const fmt = (xs) => `${median(xs).toFixed(0)} ms (p90 ${quantile(xs, 0.9).toFixed(0)} ms)`;
    report(`dashboard first render, ${SESSIONS} sessions / ${SESSIONS * EVENTS} events`, fmt(rendered), {
      "baseline: a bare page from the same server": fmt(empty),
      "the overview's 4 API requests, in parallel from Node": fmt(api),
      measured: `${ROUNDS} fresh tabs, navigation start to cards + 25 table rows drawn; seeding took ${(seeded / 1000).toFixed(1)} s`,
    });
  } finally {
    await browser.close();
    await server.stop();
  }
}
