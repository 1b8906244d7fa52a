/** Replays a logged run through the hooks' own path: the adapter's plan, `applyBatch`, the reply. */
import { applyBatch, type Answer, type LogRecord } from "../../base/core/batch.js";
import type { Decision } from "../../base/core/decision.js";
import type { EventInput, ReinsEvent } from "../../base/core/reins-event.js";
import { gradeOf, type Grade } from "../../base/core/grade.js";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import { HOOK_AGENTS } from "../hooks/hook-agents.js";
import { worstAnswer } from "../../base/vocabulary/replies.js";
import type { RolloutNews, UsageReader } from "../hooks/transcript.js";
import { usageEvent } from "../../base/vocabulary/usage.js";
import { isToolHook, toolCallCount, type LoggedCall, type LoggedRun } from "../logs/run.js";
import { traceHeader, traceLine } from "../../base/trace/trace.js";
import { withRunChecks } from "./run-project.js";

/**
 * Replays a logged run through the hooks' own path: each call's input is checked by its agent's adapter,
 * planned into events by the same `plan` the live hook runs, and decided by `applyBatch`, the one operation
 * every store performs. What the agent would have been told is the adapter's own reply.
 */

/** One hook call of a replayed run and what reins answered. */
export interface ReplayedCall {
  at: number;
  /** `PreToolUse`, `PostToolUse`, `Stop`... */
  hook: string;
  /** For tool calls: the tool and what it acted on (its command or first path). */
  tool?: string;
  label?: string;
  /** Index of the tool call this hook belongs to (1-based), 0 before the first. */
  step: number;
  records: LogRecord[];
  /** The grade of the answer the agent got for this call. */
  grade: Grade;
  /** The guard that decided the grade, when it is not `allow`. */
  guard?: string;
  /** What the agent would have read, when reins said anything. */
  told?: string;
  /** True when this call was a "done" claim that reins refused. */
  refusedDone: boolean;
  /** An input the adapter refused (answered allow, as the live hook does), with why. */
  invalid?: string;
}

export interface ReplayedRun {
  run: LoggedRun;
  calls: ReplayedCall[];
  /** Tool calls in the run. */
  steps: number;
  /** The first call that stopped the run (a person must act), if any. */
  stop: ReplayedCall | null;
  /** The first tool call denied (a deny, or a stop that lands on a tool call). */
  deny: ReplayedCall | null;
  /** The first advice. */
  advise: ReplayedCall | null;
  /** "Done" claims refused. */
  refusedDone: number;
  /** The session's state at the end. */
  state: State | null;
  /** The policy it was replayed under: the one given, with the run's own check commands where it names none. */
  policy: Policy;
}

/** The reason or context text of an agent reply, whatever the protocol. */
export function replyText(reply: object | null): string | undefined {
  if (reply === null) return undefined;
  const r = reply as {
    reason?: unknown;
    systemMessage?: unknown;
    hookSpecificOutput?: { permissionDecisionReason?: unknown; additionalContext?: unknown };
  };
  const text =
    r.hookSpecificOutput?.permissionDecisionReason ??
    r.reason ??
    r.hookSpecificOutput?.additionalContext ??
    r.systemMessage;
  return typeof text === "string" ? text : undefined;
}

/** A usage reader that hands the plan this call's logged usage, and remembers whether the plan asked. */
class LoggedUsage implements UsageReader {
  asked = false;
  constructor(private readonly call: LoggedCall) {}
  read(_session: string, _path: string | undefined, policy: Policy): EventInput[] {
    this.asked = true;
    return (this.call.usage ?? []).map((u) => usageEvent(u, policy));
  }
  /** A logged run's tool results already carry the exit codes the importer found. */
  readRollout(session: string, path: string | undefined, policy: Policy): RolloutNews {
    return { usage: this.read(session, path, policy), exitCode: () => undefined };
  }
}

const CLAIM_HOOKS = new Set(["Stop", "SubagentStop", "AfterAgent"]);

/** The answer that decides a call's grade: the claim's own for a "done" claim, else the worst. */
function decidingAnswer(hook: string, answers: readonly Answer[]): Decision | null {
  if (CLAIM_HOOKS.has(hook)) return answers[answers.length - 1] ?? null;
  return worstAnswer(answers);
}

/** The guard whose result gave `decision` its verdict. */
function decidingGuard(decision: Decision): string | undefined {
  const results = decision.results;
  const result =
    results.find((r) => r.verdict === decision.verdict && (r.needsHuman ?? false) === decision.needsHuman) ??
    results.find((r) => r.verdict === decision.verdict);
  if (result === undefined) return undefined;
  // A breaker trip names why it tripped: the breaker has several rules, and they are judged apart.
  const trip = result.effects?.find((e) => e.kind === "circuit.opened");
  return trip?.kind === "circuit.opened" ? `${result.guard}:${trip.reason}` : result.guard;
}

/**
 * Replays one logged run under `policy`, deterministically: event ids come from the run and the call. The
 * checks reins suggests are the run's own project's (read from its log) where the policy names none.
 */
export function replayRun(run: LoggedRun, given: Policy): ReplayedRun {
  const policy = withRunChecks(given, run);
  const adapter = HOOK_AGENTS[run.agent];
  if (adapter === undefined) throw new Error(`no adapter for agent ${run.agent}`);
  const states = new Map<string, State>();
  const ids = new Set<string>();
  const calls: ReplayedCall[] = [];
  let step = 0;
  for (const [index, call] of run.calls.entries()) {
    const hook = typeof call.input.hook_event_name === "string" ? call.input.hook_event_name : "";
    const parsed = adapter.input.safeParse(call.input);
    if (!parsed.success) {
      calls.push({
        at: call.at,
        hook,
        step,
        records: [],
        grade: "allow",
        refusedDone: false,
        invalid: parsed.error.issues[0]?.message ?? "invalid input",
      });
      continue;
    }
    const input = parsed.data;
    const scope = `session:${adapter.session(input)}`;
    const usage = new LoggedUsage(call);
    const plan = adapter.plan(input, {
      policy,
      transcripts: usage,
      before: adapter.needsState(input) ? (states.get(scope) ?? null) : null,
    });
    const planned = usage.asked ? plan.events : [...plan.events, ...usage.read("", undefined, policy)];
    const events: ReinsEvent[] = planned.map((e, j) => ({
      ...e,
      at: call.at,
      scope: plan.scope,
      id: e.id ?? `${run.id}#${index}#${j}`,
    }));
    const result = applyBatch(
      plan.scope,
      events,
      policy,
      (s) => states.get(s) ?? null,
      (s, id) => ids.has(`${s}\n${id}`),
    );
    for (const [s, state] of result.states) states.set(s, state);
    for (const record of result.records)
      if (record.event.id !== undefined) ids.add(`${record.scope}\n${record.event.id}`);
    if (isToolHook(hook)) step += 1;
    const answer = decidingAnswer(hook, result.answers);
    const grade = answer === null ? "allow" : gradeOf(answer);
    const guard = answer === null || grade === "allow" ? undefined : decidingGuard(answer);
    const told = replyText(plan.reply(result.answers, states.get(plan.scope) ?? null));
    const tool = typeof call.input.tool_name === "string" ? call.input.tool_name : undefined;
    const touched = events.find((e) => e.kind === "tool.requested" || e.kind === "tool.completed");
    const label =
      touched !== undefined && "tool" in touched
        ? (touched.command ?? touched.writes?.[0] ?? touched.reads?.[0])
        : undefined;
    calls.push({
      at: call.at,
      hook,
      step,
      records: result.records.filter((r) => r.scope === plan.scope),
      grade,
      ...(guard !== undefined ? { guard } : {}),
      ...(told !== undefined ? { told } : {}),
      ...(tool !== undefined ? { tool } : {}),
      ...(label !== undefined ? { label } : {}),
      refusedDone: CLAIM_HOOKS.has(hook) && answer !== null && answer.verdict === "block",
    });
  }
  const state = states.get(`session:${run.id}`) ?? [...states.values()][0] ?? null;
  return replayedRun(run, calls, state, policy);
}

function replayedRun(
  run: LoggedRun,
  calls: ReplayedCall[],
  state: State | null,
  policy: Policy,
): ReplayedRun {
  let stop: ReplayedCall | null = null;
  let deny: ReplayedCall | null = null;
  let advise: ReplayedCall | null = null;
  for (const call of calls) {
    if (stop === null && call.grade === "stop") stop = call;
    if (deny === null && isToolHook(call.hook) && (call.grade === "deny" || call.grade === "stop"))
      deny = call;
    if (advise === null && call.grade === "advise") advise = call;
  }
  return {
    run,
    calls,
    // Not the replay's step counter: an input the adapter refused is still a tool call the agent made.
    steps: toolCallCount(run),
    stop,
    deny,
    advise,
    refusedDone: calls.filter((c) => c.refusedDone).length,
    state,
    policy,
  };
}

/**
 * A replayed run as a trace (`reins check` replays it): the policy, then every event of the session with
 * the decision it got. This is how a real run that reins judged wrongly becomes a regression test.
 */
export function traceOf(replayed: ReplayedRun): string {
  const lines = [traceHeader(replayed.policy)];
  for (const call of replayed.calls) for (const r of call.records) lines.push(traceLine(r.event, r.decision));
  return `${lines.join("\n")}\n`;
}
