// The boundary's cost on the hook's path: one project with Claude Code's sandbox set by `reins init claude`,
// one with `--no-contain`, each answered as the daemon answers (its services open, one call after another).
// The boundary itself lives in Claude Code (its sandbox wraps the agent's commands, not reins' hooks), so
// what reins adds is the containment check at a turn's start: a few small file reads, no process.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryIo } from "../dist/cli/io.js";
import { run } from "../dist/cli/run.js";
import { HOOK_AGENTS } from "../dist/guard/hooks/hook-agents.js";
import { answerHook, openServices, readHookInput } from "../dist/guard/hooks/hook-call.js";
import { median } from "./stats.js";

const us = (ns) => `${(ns / 1e3).toFixed(1)} µs`;

async function project(contain) {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-boundary-"));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  const env = { HOME: join(dir, "home"), PATH: process.env.PATH ?? "" };
  const io = memoryIo({ cwd: dir, env });
  const code = await run(["init", "claude", "--in-process", ...(contain ? [] : ["--no-contain"])], io);
  if (code !== 0) throw new Error(io.err.join(""));
  return { dir, env };
}

async function timeCalls(services, event, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const input = {
      session_id: `bench-${i % 10}`,
      hook_event_name: event,
      cwd: services.root,
      ...(event === "PreToolUse" ? { tool_name: "Read", tool_input: { file_path: `src/f${i}.ts` } } : {}),
      ...(event === "UserPromptSubmit" ? { prompt: "go", prompt_id: `p${i}` } : {}),
    };
    const checked = readHookInput("claude", JSON.stringify(input));
    const t0 = process.hrtime.bigint();
    await answerHook(HOOK_AGENTS.claude, checked.input, services, 1_700_000_000_000 + i);
    times.push(Number(process.hrtime.bigint() - t0));
  }
  return times;
}

export async function boundaryBench(report) {
  const sides = {};
  for (const contain of [false, true]) {
    const { dir, env } = await project(contain);
    sides[contain ? "on" : "off"] = await openServices(dir, env);
  }
  for (const event of ["PreToolUse", "UserPromptSubmit"]) {
    const rounds = { on: [], off: [] };
    for (const side of ["off", "on"]) await timeCalls(sides[side], event, 50);
    // Alternated, so a machine that slows down or warms up weighs on both sides alike.
    for (let r = 0; r < 7; r++)
      for (const side of r % 2 === 0 ? ["off", "on"] : ["on", "off"])
        rounds[side].push(median(await timeCalls(sides[side], event, 200)));
    const on = median(rounds.on);
    const off = median(rounds.off);
    report(`boundary: ${event} answered, boundary on vs off`, `${us(on)} vs ${us(off)}`, {
      ratio: `${(on / off).toFixed(2)}x (median of 7 alternated rounds of 200 calls each)`,
      "processes started": "0 (the containment check reads a few files, at a turn's start only)",
    });
  }
  for (const services of Object.values(sides)) await services.store.close();
}
