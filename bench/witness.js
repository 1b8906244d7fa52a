// The proof's cost per task, against the task's own check run once (what the gate already pays), measured in
// the same run on a small project (200 source files, a check of about 100 ms, a change to 20 of them and a
// new test): the counterfactual of an honest change (its judges read, its change set aside, its check run
// again, put back); the proof of a change that also edits a judge (package.json's test script: the check runs
// with the judges as they were, then the counterfactual); and the hunk tier (each of the change's 20 hunks set
// aside alone, up to the cap of 8, its check run each time), fresh and from its content cache.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runChecks } from "../dist/run/checks/checks.js";
import { DEFAULT_SETTINGS } from "../dist/run/control/settings.js";
import { HunkCache, hunkTier } from "../dist/run/drive/hunks.js";
import { judgesAsTheyWere, reviewJudges } from "../dist/run/drive/judge-files.js";
import { Git } from "../dist/run/git/git.js";
import { median } from "./stats.js";

const ms = (ns) => `${(ns / 1e6).toFixed(1)} ms`;
const ROUNDS = 7;

function project() {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-witness-"));
  const git = (...args) => execFileSync("git", ["-C", dir, ...args], { stdio: "ignore" });
  git("init", "-q");
  git("config", "user.email", "b@example.com");
  git("config", "user.name", "bench");
  mkdirSync(join(dir, "src"));
  mkdirSync(join(dir, "test"));
  writeFileSync(join(dir, ".gitignore"), ".reins/\n");
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: "b", scripts: { test: "node test/all.test.js" } }, null, 2)}\n`,
  );
  for (let i = 0; i < 200; i++) writeFileSync(join(dir, "src", `m${i}.js`), `module.exports = ${i};\n`);
  writeFileSync(join(dir, "test", "all.test.js"), "require('../src/m0.js'); setTimeout(() => {}, 100);\n");
  git("add", "-A");
  git("commit", "-qm", "start");
  const base = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, "src", `m${i}.js`), `module.exports = ${i} + 1;\n`);
  writeFileSync(join(dir, "test", "new.test.js"), "console.log('ok');\n");
  return { dir, base };
}

const check = {
  name: "unit",
  command: "node test/all.test.js",
  tier: "medium",
  format: "exit",
  timeoutMs: 60_000,
};

/** One proof as actions.ts runs it: judges read, as they were (when changed), the counterfactual, put back. */
async function proof(repo, base, reviews = []) {
  const changes = await repo.changes(base);
  const t0 = process.hrtime.bigint();
  const review = await reviewJudges(repo, base, changes, DEFAULT_SETTINGS, [check.command]);
  reviews.push(Number(process.hrtime.bigint() - t0));
  const touched = [...new Set([...review.putBack, ...Object.keys(review.rewrite), ...review.behaviour])];
  const saved = await repo.saveTree("refs/reins/bench/aside/t", JSON.stringify(touched));
  if (review.changed.length > 0) {
    await judgesAsTheyWere(repo, base, review);
    await runChecks([check], { cwd: repo.cwd });
  }
  await repo.putFiles(base, review.behaviour);
  await runChecks([check], { cwd: repo.cwd });
  await repo.putFiles(saved, touched);
  await repo.deleteRef("refs/reins/bench/aside/t");
  return { saved, review, changes };
}

async function time(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0);
}

export async function witnessBench(report) {
  const { dir, base } = project();
  const repo = new Git(dir);
  const plain = [];
  const honest = [];
  const reviews = [];
  const judged = [];
  const hunksFresh = [];
  const hunksCached = [];
  const pkg = join(dir, "package.json");
  const original = readFileSync(pkg, "utf8");
  for (let round = 0; round < ROUNDS; round++) {
    plain.push(await time(() => runChecks([check], { cwd: dir })));
    honest.push(await time(() => proof(repo, base, reviews)));
    writeFileSync(pkg, original.replace("node test/all.test.js", "node test/all.test.js && true"));
    judged.push(await time(() => proof(repo, base)));
    writeFileSync(pkg, original);
    const cacheFile = join(dir, ".reins", `cache-${round}.json`);
    const tier = async () => {
      const saved = await repo.saveTree("refs/reins/bench/aside/h", "hunks");
      const changes = await repo.changes(base);
      const cache = new HunkCache(cacheFile);
      await hunkTier({
        git: repo,
        base,
        saved,
        files: changes.filter((c) => c.path.startsWith("src/")),
        cap: 8,
        commands: check.command,
        cache,
        scratch: join(dir, ".reins", "hunk.patch"),
        run: () => runChecks([check], { cwd: dir }),
      });
      cache.save();
      await repo.deleteRef("refs/reins/bench/aside/h");
    };
    mkdirSync(join(dir, ".reins"), { recursive: true });
    hunksFresh.push(await time(tier));
    hunksCached.push(await time(tier));
  }
  rmSync(dir, { recursive: true, force: true });
  const p = median(plain);
  const ratio = (ns) => `${(ns / p).toFixed(2)}x the check`;
  report(
    "witness: the proof of an honest task (judges read, 20 files set aside, its ~100 ms check run again, put back)",
    `p50 ${ms(median(honest))}`,
    {
      baseline: `the task's own check run once: p50 ${ms(p)}`,
      ratio: `${ratio(median(honest))}; beyond the check run again: ${ms(median(honest) - p)}, of which reading the judges: ${ms(median(reviews))}`,
    },
  );
  report(
    "witness: the proof of a task that changed a judge (package.json's test script: the check with the judges as they were, then the counterfactual)",
    `p50 ${ms(median(judged))}`,
    { baseline: `the task's own check run once: p50 ${ms(p)}`, ratio: ratio(median(judged)) },
  );
  report(
    "witness: the hunk tier (20 hunks, cap 8: 8 hunks set aside alone, the check run for each)",
    `p50 ${ms(median(hunksFresh))}`,
    {
      baseline: `the task's own check run once: p50 ${ms(p)}`,
      ratio: `${ratio(median(hunksFresh))} (${(median(hunksFresh) / p / 8).toFixed(2)}x per hunk)`,
      cached: `the same tree again, from the content cache: p50 ${ms(median(hunksCached))} (${ratio(median(hunksCached))})`,
    },
  );
}
