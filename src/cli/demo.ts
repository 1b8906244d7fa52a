/** `reins demo`: scripted agents run through the engine, shown as timelines and a summary table. */
import { writeFileSync } from "node:fs";
import { createColors } from "picocolors";
import type { ReinsEvent } from "../base/core/reins-event.js";
import { formatCount } from "../base/core/format.js";
import type { Policy } from "../base/core/policy.js";
import { demoAgents } from "../run/demo/agents.js";
import { inMemory, runAgent, type AgentRun, type DecideFn, type Entry } from "../run/demo/run-agent.js";
import { traceHeader, traceLine } from "../base/trace/trace.js";
import type { Io } from "./io.js";
import { pad, table } from "../base/text/table.js";
import { wrap } from "../base/text/wrap.js";

/** The demo's fixed start time (2026-01-05 09:00 UTC), so every run prints and records the same. */
export const DEMO_START = Date.UTC(2026, 0, 5, 9, 0, 0);

type Colors = ReturnType<typeof createColors>;

/**
 * A minute-aligned start for the demo whose last event falls in the minute before `now`: what it records
 * reads as just done ("12s ago"), not as a quarter of an hour old. Its scripted agents are run once in
 * memory first to measure how long the demo's time runs (each starts a minute after the one before).
 */
export async function demoStartBefore(now: number, policy: Policy): Promise<number> {
  let end = DEMO_START;
  for (const [i, agent] of demoAgents.entries()) {
    const scope = `session:demo-${agent.name}`;
    const run = await runAgent(agent, scope, DEMO_START + i * 60_000, inMemory(scope, policy).decide);
    end = Math.max(end, run.entries.at(-1)?.event.at ?? end);
  }
  return Math.floor((now - (end - DEMO_START)) / 60_000) * 60_000;
}

function clock(at: number, start: number): string {
  const s = Math.floor((at - start) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

function label(event: ReinsEvent): string | null {
  switch (event.kind) {
    case "tool.requested":
      return `${event.tool} ${event.command ?? event.writes?.[0] ?? event.reads?.[0] ?? ""}`.trim();
    case "verification.ran":
      return `check ${event.name}: ${event.passed ? "passed" : "failed"}`;
    case "completion.claimed":
      return `claims "done"`;
    case "usage.recorded":
      return `usage +${formatCount((event.inputTokens ?? 0) + (event.outputTokens ?? 0))} tokens`;
    case "session.started":
      return "session starts";
    default:
      return null;
  }
}

/** How wide the demo's lines may be: the terminal's width, else 100 columns (a pipe, a file). */
const DEMO_WIDTH = 100;

function renderEntry(
  { event, decision }: Entry,
  start: number,
  c: Colors,
  width = DEMO_WIDTH,
): string | null {
  const text = label(event);
  const quiet = event.kind === "usage.recorded" || event.kind === "session.started";
  if (text === null || (quiet && decision.verdict === "allow")) return null;
  const verdict =
    decision.verdict === "block"
      ? c.bold(c.red("BLOCK"))
      : decision.verdict === "warn"
        ? c.yellow("warn ")
        : c.green("allow");
  const human = decision.needsHuman ? c.magenta(" +human") : "";
  let line = `  ${c.dim(clock(event.at, start))}  ${pad(verdict, 5)}${human}  ${text}`;
  for (const result of decision.results) {
    if (result.verdict === "allow" || result.message === undefined) continue;
    // Wrapped at word boundaries under the guard's name, so a terminal never cuts a word in two.
    const text = wrap(`${result.guard}: ${result.message}`, width - 13, " ".repeat(13));
    const guard = `${result.guard}:`;
    line += `\n${" ".repeat(11)}${c.dim("└")} ${c.cyan(guard)}${text.slice(guard.length)}`;
  }
  return line;
}

function outcome(run: AgentRun): string {
  const block = run.firstBlock;
  if (block === null) return run.finished ? "finished with evidence" : "ran to the end";
  const guard = block.decision.results.find((r) => r.verdict === "block")?.guard ?? "?";
  const then = run.finished ? ", then finished with evidence" : "";
  const what =
    block.event.kind === "completion.claimed"
      ? `"done" refused by ${guard}`
      : `${guard} at ${clock(block.event.at, run.entries[0]?.event.at ?? 0)}`;
  return what + then;
}

/** Where the demo's decisions are made: an in-memory engine, or a store (what `reins demo` uses). */
export type DemoBackend = (agent: string) => DecideFn;

/**
 * `reins demo`: scripted agents run through the engine; prints each timeline (every call, the decision,
 * the moment reins stepped in and why) and a summary table. `trace` also writes every event and decision
 * as a trace that `reins check` replays. Each agent's session is `session:demo-<agent>-<run>`.
 */
export async function demo(
  io: Io,
  policy: Policy,
  options: {
    agent?: string;
    trace?: string;
    start?: number;
    run?: string;
    backend?: (scope: string) => DecideFn;
  } = {},
): Promise<number> {
  const c = createColors(io.color);
  const agents =
    options.agent === undefined ? demoAgents : demoAgents.filter((a) => a.name === options.agent);
  if (agents.length === 0) {
    io.stderr(
      `reins: unknown demo agent "${options.agent}"; choose one of ${demoAgents.map((a) => a.name).join(", ")}\n`,
    );
    return 2;
  }
  const base = options.start ?? DEMO_START;
  const backend = options.backend ?? ((scope: string) => inMemory(scope, policy).decide);
  const runs: AgentRun[] = [];
  const trace = [traceHeader(policy)];
  for (const [i, agent] of agents.entries()) {
    const scope = `session:demo-${agent.name}${options.run !== undefined ? `-${options.run}` : ""}`;
    const start = base + i * 60_000;
    io.stdout(`\n${c.bold(`${i + 1}. ${agent.title}`)} ${c.dim(`(${scope})`)}\n`);
    const run = await runAgent(agent, scope, start, backend(scope), (entry) => {
      const line = renderEntry(entry, start, c, Math.max(60, io.columns ?? DEMO_WIDTH));
      if (line !== null) io.stdout(`${line}\n`);
      trace.push(traceLine(entry.event, entry.decision));
    });
    runs.push(run);
  }
  const rows = runs.map((r) => [
    r.agent.name,
    String(r.calls),
    String(r.callsAfterTrouble),
    formatCount(r.tokens),
    outcome(r),
  ]);
  io.stdout(`\n${c.bold("Summary")}\n`);
  io.stdout(
    table(["agent", "calls", "after first sign", "tokens", "what stopped it"], rows, [
      "left",
      "right",
      "right",
      "right",
    ]),
  );
  if (options.trace !== undefined) {
    writeFileSync(options.trace, `${trace.join("\n")}\n`);
    io.stdout(`\nTrace written to ${options.trace}; replay it with: reins check ${options.trace}\n`);
  }
  return 0;
}
