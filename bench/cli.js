// CLI start times: `reins --version`, `reins status` and `reins doctor` on a small project, and the in-process
// hook fallback (`reins hook claude`), each a process of its own timed to exit, interleaved with an empty Node
// process (`node -e 0`) so both see the same load. Figures are medians, printed beside that same-run floor.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./stats.js";

const bin = join(import.meta.dirname, "..", "bin", "reins.js");
const ms = (ns) => `${(ns / 1e6).toFixed(1)} ms`;

function once(args, cwd, env, input = "") {
  const t0 = process.hrtime.bigint();
  const ran = spawnSync(process.execPath, args, { cwd, env, input });
  const ns = Number(process.hrtime.bigint() - t0);
  // doctor exits 1 when an installed agent is not guarded; none is installed here, so every command exits 0.
  if (ran.status !== 0) throw new Error(`node ${args.join(" ")} exited ${ran.status}: ${ran.stderr}`);
  return ns;
}

export async function cliBench(report, _options, runs = 15) {
  // A small project: a git repository with a config, one session recorded (status reads it, doctor opens
  // the store), and a state and runtime folder of its own so no other daemon or project is seen.
  const project = mkdtempSync(join(tmpdir(), "reins-bench-cli-"));
  spawnSync("git", ["init", "-q"], { cwd: project });
  writeFileSync(join(project, "reins.config.json"), "{}");
  const env = {
    ...process.env,
    REINS_RUNTIME_DIR: mkdtempSync(join(tmpdir(), "reins-bench-cli-rt-")),
    REINS_STATE_DIR: mkdtempSync(join(tmpdir(), "reins-bench-cli-state-")),
    XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), "reins-bench-cli-cache-")),
  };
  const input = JSON.stringify({
    session_id: "bench",
    hook_event_name: "PreToolUse",
    tool_name: "Read",
    tool_input: { file_path: "src/a.ts" },
    cwd: project,
  });
  const commands = {
    "--version": { args: [bin, "--version"] },
    status: { args: [bin, "status"] },
    doctor: { args: [bin, "doctor"] },
    "hook claude (in-process)": { args: [bin, "hook", "claude"], input },
  };
  // One call each first: the store made, the policy and code caches filled, as any first call does.
  for (const c of Object.values(commands)) once(c.args, project, env, c.input);
  const floor = [];
  const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let i = 0; i < runs; i++) {
    floor.push(once(["-e", "0"], project, env));
    for (const [name, c] of Object.entries(commands)) times[name].push(once(c.args, project, env, c.input));
  }
  const empty = median(floor);
  report("cli floor: empty Node process (node -e 0)", `p50 ${ms(empty)}`, { runs });
  for (const [name, list] of Object.entries(times))
    report(`cli: reins ${name}`, `p50 ${ms(median(list))}`, {
      ratio: `${(median(list) / empty).toFixed(2)}x an empty Node process`,
      aim: "< 3x an empty Node process",
    });
}
