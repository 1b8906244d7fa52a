// The witness's cost: for one green task, setting its change aside (saving the tree under a ref), running its
// checks again and putting the change back, against running its checks once (what the gate already pays),
// measured in the same run on a small project with 20 changed files and a check of about 100 ms.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runChecks } from "../dist/checks/checks.js";
import { Git } from "../dist/git/git.js";
import { median } from "./stats.js";

const ms = (ns) => `${(ns / 1e6).toFixed(1)} ms`;

export async function witnessBench(report) {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-witness-"));
  const git = (...args) => execFileSync("git", ["-C", dir, ...args], { stdio: "ignore" });
  git("init", "-q");
  git("config", "user.email", "b@example.com");
  git("config", "user.name", "bench");
  mkdirSync(join(dir, "src"));
  mkdirSync(join(dir, "test"));
  for (let i = 0; i < 200; i++) writeFileSync(join(dir, "src", `m${i}.js`), `module.exports = ${i};\n`);
  writeFileSync(join(dir, "test", "all.test.js"), "require('../src/m0.js'); setTimeout(() => {}, 100);\n");
  git("add", "-A");
  git("commit", "-qm", "start");
  const base = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  // The task's change: 20 source files and a test.
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, "src", `m${i}.js`), `module.exports = ${i} + 1;\n`);
  writeFileSync(join(dir, "test", "new.test.js"), "console.log('ok');\n");
  const check = {
    name: "unit",
    command: "node test/all.test.js",
    tier: "medium",
    format: "exit",
    timeoutMs: 60_000,
  };
  const repo = new Git(dir);
  const plain = [];
  const witness = [];
  for (let round = 0; round < 7; round++) {
    let t0 = process.hrtime.bigint();
    await runChecks([check], { cwd: dir });
    plain.push(Number(process.hrtime.bigint() - t0));
    t0 = process.hrtime.bigint();
    const changes = await repo.changes(base);
    const aside = changes.map((c) => c.path).filter((p) => !p.startsWith("test/"));
    const saved = await repo.saveTree("refs/reins/bench/aside/t", JSON.stringify(aside));
    await repo.putFiles(base, aside);
    await runChecks([check], { cwd: dir });
    await repo.putFiles(saved, aside);
    await repo.deleteRef("refs/reins/bench/aside/t");
    witness.push(Number(process.hrtime.bigint() - t0));
  }
  rmSync(dir, { recursive: true, force: true });
  const extra = median(witness) - median(plain);
  report(
    "witness: a green task's counterfactual (20 files set aside, its ~100 ms check run again, put back)",
    `p50 ${ms(median(witness))}`,
    {
      baseline: `the task's own check run once: p50 ${ms(median(plain))}`,
      ratio: `${(median(witness) / median(plain)).toFixed(2)}x the check; the setting aside and putting back add ${ms(extra - median(plain))}`,
    },
  );
}
