/** The reducer: how each event changes the facts in a scope's state, apart from any guard's verdict. */
import { CAPS, LEVEL, emptyMeter, type Meter, type Spend, type State } from "./state.js";
import { halfOpenBreaker, passProbe, resetBreaker, settleBreaker } from "./breaker.js";
import { amount, capSet, clip, pushCapped } from "./capped.js";
import { churnLevel } from "./churn-level.js";
import { draftOf, inPlace, mine, writable, type Draft } from "./cow.js";
import type { Opened, Own, Shared } from "./own.js";
import { assertNever } from "./errors.js";
import type {
  BudgetExtended,
  ReinsEvent,
  ToolCompleted,
  ToolRequested,
  UsageRecorded,
  VerificationRan,
} from "./reins-event.js";
import { callSignature, failureClass, runKey, writeKey } from "./keys.js";
import { SESSION_REF, levelOf, limitOf, usedOf, utilization, type MeterRef } from "./meter.js";
import { defaultPolicy, type Policy } from "./policy.js";
import { NO_ITEMS } from "./empty.js";

/**
 * Folds one event into the facts of a scope, in place. The policy only sizes windows and supplies the
 * breaker's timeouts; verdicts and the state changes they cause come from the guards (see engine.ts).
 * Below the top level, `state` is written only through `draft` (see cow.ts); in place by default.
 */
export function applyEvent(state: State, event: ReinsEvent, policy: Policy, draft: Draft = inPlace): void {
  fold(mine(draft, state), event, policy, draft);
}

/** `applyEvent` on a state whose top is open (see cow.ts): its parts below are opened through `d`. */
export function fold(state: Own<State>, event: ReinsEvent, policy: Policy, d: Draft): void {
  const at = event.at;
  if (state.startedAt === null) {
    state.startedAt = at;
    writableMeter(d, state, SESSION_REF)!.startedAt = at;
  }
  state.lastAt = at;
  if (event.task !== undefined && event.task !== "") enterTask(d, state, clip(event.task), at);
  settle(d, state, at, policy);

  switch (event.kind) {
    case "session.started":
      state.ended = false;
      break;
    case "session.ended":
      state.ended = true;
      break;
    case "task.started": {
      if (event.taskType !== undefined && state.budget.tasks[state.task] !== undefined)
        writableMeter(d, state, { meter: "task", task: state.task })!.taskType = clip(event.taskType);
      if (!state.inFlight.includes(state.task))
        pushCapped(writable(d, state, "inFlight"), state.task, CAPS.inFlight);
      break;
    }
    case "task.ended": {
      state.inFlight = state.inFlight.filter((t) => t !== state.task);
      if (event.status === "failed") recordTaskFailure(d, state, state.task);
      if (event.status === "done")
        capSet(writable(d, state, "churn"), state.task, { failures: 0, confirmed: 0 }, CAPS.churn);
      break;
    }
    case "tool.requested":
      applyRequest(d, state, event, policy);
      break;
    case "tool.completed":
      applyCompletion(d, state, event);
      break;
    case "usage.recorded":
      applyUsage(d, state, event, policy);
      break;
    case "verification.ran":
      applyVerification(d, state, event);
      break;
    case "iteration.ended":
      state.iterations += 1;
      state.cycle += 1;
      if (event.outcome === "failure") recordTaskFailure(d, state, state.task);
      if (event.outcome === "success")
        capSet(writable(d, state, "churn"), state.task, { failures: 0, confirmed: 0 }, CAPS.churn);
      break;
    case "completion.claimed":
      break;
    case "human.budget_extended":
      applyExtension(d, state, event, policy);
      break;
    case "human.budget_reset": {
      const taskType = state.budget.tasks[state.task]?.taskType ?? null;
      const tasks: Record<string, Meter> = {};
      if (state.task !== "") tasks[state.task] = emptyMeter(at, taskType);
      state.budget = { session: emptyMeter(at), tasks };
      state.rate = { buckets: [], firedWindow: -1 };
      break;
    }
    case "human.circuit_acknowledged":
      state.breaker = halfOpenBreaker(state.breaker);
      clearAnomalies(d, state);
      break;
    case "human.circuit_reset":
      state.breaker = resetBreaker(state.breaker);
      clearAnomalies(d, state);
      break;
    case "human.alert_acknowledged":
    case "human.spec_approved":
    case "human.task_approved":
    case "guard.tampered":
      break;
    case "human.confirmed": {
      // A person's confirmation also lets one call on reins' own files through (self-protection); at most
      // one waits, so a confirmation long ago is not a standing permission.
      state.protectionGrants = 1;
      if (state.churn[state.task] !== undefined) {
        const memo = writable(d, writable(d, state, "churn"), state.task);
        memo.confirmed = churnLevel(memo.failures, policy);
      }
      break;
    }
    default:
      assertNever(event);
  }
  state.seq += 1;
}

/**
 * A pure fold: returns the state after `event`, leaving `state` untouched (the parts the event does not
 * change are shared with it).
 */
export function reduce(state: State, event: ReinsEvent, policy: Policy = defaultPolicy): State {
  const { next, own, draft } = draftOf(state);
  fold(own, event, policy, draft);
  return next;
}

/** The meter `ref` points at, made writable (see cow.ts), if it exists. */
export function writableMeter(d: Draft, state: Own<State>, ref: MeterRef): Own<Meter> | undefined {
  return meterOf(d, state, ref.meter === "session" ? null : ref.task);
}

/** The session's meter (`task` null) or the task's, made writable, if it exists. */
function meterOf(d: Draft, state: Own<State>, task: string | null): Own<Meter> | undefined {
  if (task !== null && state.budget.tasks[task] === undefined) return undefined;
  const budget = writable(d, state, "budget");
  return task === null ? writable(d, budget, "session") : writable(d, writable(d, budget, "tasks"), task);
}

/** The spend of the session's meter (`task` null) or the task's, made writable, if the meter exists. */
function writableSpend(d: Draft, state: Own<State>, task: string | null): Own<Spend> | undefined {
  const meter = meterOf(d, state, task);
  return meter === undefined ? undefined : writable(d, meter, "spent");
}

function enterTask(d: Draft, state: Own<State>, task: string, at: number): void {
  state.task = task;
  if (state.budget.tasks[task] === undefined)
    capSet(writable(d, writable(d, state, "budget"), "tasks"), task, emptyMeter(at), CAPS.tasks);
}

function recordTaskFailure(d: Draft, state: Own<State>, task: string): void {
  const memo = state.churn[task] ?? { failures: 0, confirmed: 0 };
  const churn = writable(d, state, "churn");
  capSet(churn, task, { failures: memo.failures + 1, confirmed: memo.confirmed }, CAPS.churn);
}

/** The breaker's moves with time (see settleBreaker). */
function settle(d: Draft, state: Own<State>, at: number, policy: Policy): void {
  const next = settleBreaker(state.breaker, at, policy.circuit);
  // Half-opened by the timeout, as after an acknowledgement: the counters that tripped it would trip the
  // probe at once.
  if (state.breaker.status === "open" && next.status === "half_open") clearAnomalies(d, state);
  state.breaker = next;
}

function clearAnomalies(d: Draft, state: Own<State>): void {
  const calls = writable(d, state, "calls");
  calls.sig = "";
  calls.streak = 0;
  calls.sigOut = null;
  calls.taskCalls = 0;
  calls.times = [];
  calls.errorHash = "";
  calls.errorStreak = 0;
  state.failedVerifications = 0;
  state.lastFailure = null;
}

function applyRequest(d: Draft, state: Own<State>, event: ToolRequested, policy: Policy): void {
  const calls = writable(d, state, "calls");
  const sig = callSignature(event);
  if (sig === calls.sig) {
    calls.streak += 1;
  } else {
    calls.sig = sig;
    calls.streak = 1;
    calls.sigOut = null;
  }
  if (calls.task !== state.task) {
    calls.task = state.task;
    calls.taskCalls = 0;
  }
  calls.taskCalls += 1;
  pushCapped(writable(d, calls, "times"), event.at, policy.circuit.rapidFireThreshold);
  const shape = event.shapeHash === undefined ? sig : clip(`${event.tool}#${event.shapeHash}`);
  const label = clip(event.command ?? event.writes?.[0] ?? event.reads?.[0] ?? event.tool);
  const last = calls.recent[calls.recent.length - 1];
  // Retrying a call that never came back (it was refused) is not a new call: it must not push an A-B-A-B
  // loop out of the window and so turn its block into an allow.
  if (last === undefined || last.sig !== sig || last.out !== null)
    pushCapped(
      writable(d, calls, "recent"),
      { sig, shape, tool: clip(event.tool), label, out: null, failed: false },
      CAPS.recentCalls,
    );

  writableSpend(d, state, null)!.toolCalls += 1;
  if (state.task !== "") {
    const task = writableSpend(d, state, state.task);
    if (task !== undefined) task.toolCalls += 1;
  }

  const readPaths = event.reads ?? NO_ITEMS;
  if (readPaths.length > 0) {
    const reads = writable(d, state, "reads");
    for (const path of readPaths) {
      const key = clip(path);
      capSet(reads, key, (reads[key] ?? 0) + 1, CAPS.reads);
    }
  }
  const writes = event.writes ?? NO_ITEMS;
  if (writes.length === 0) return;
  const edits = writable(d, state, "edits");
  // A new edit round starts with the first edit after a check: thrashing counts rounds, not single edits.
  if (edits.sinceVerification === 0) state.cycle += 1;
  edits.total += 1;
  edits.lastSeq = state.seq;
  edits.sinceVerification += 1;
  edits.sinceTests += 1;
  edits.unverifiedLines += Math.max(0, Math.min(event.linesChanged ?? 0, 1e9)) || 0; // NaN counts as 0
  const content = clip(event.inputHash);
  for (const path of writes) {
    const key = clip(path);
    if (key in state.reads && state.reads[key] !== 0) writable(d, state, "reads")[key] = 0;
    const file = state.files[key];
    if (file === undefined || file.lastIteration !== state.cycle) {
      capSet(
        writable(d, state, "files"),
        key,
        { iterations: (file?.iterations ?? 0) + 1, lastIteration: state.cycle },
        CAPS.files,
      );
    }
    const memoKey = writeKey(path);
    const memo = state.resources[memoKey];
    const same = memo !== undefined && memo.content === content ? memo.same + 1 : 1;
    capSet(
      writable(d, state, "resources"),
      memoKey,
      { same, quiet: same, content, edits: edits.total },
      CAPS.resources,
    );
  }
}

/**
 * What reins answered a tool call, for the breaker: a call denied on evidence of a loop is counted per call
 * (the latest few calls), until a write is let through: then a change was made, and the count starts again.
 */
export function noteDenial(d: Draft, state: Own<State>, event: ToolRequested, denied: boolean): void {
  const list = state.calls.denied;
  if (denied) {
    const sig = callSignature(event);
    const count = (list?.find((e) => e.sig === sig)?.count ?? 0) + 1;
    const next = [...(list ?? []).filter((e) => e.sig !== sig), { sig, count }];
    writable(d, state, "calls").denied = next.slice(-CAPS.deniedCalls);
  } else if (list !== undefined && (event.writes?.length ?? 0) > 0) {
    delete writable(d, state, "calls").denied;
  }
}

function applyCompletion(d: Draft, state: Own<State>, event: ToolCompleted): void {
  const sig = callSignature(event);
  const out = event.outputHash === undefined ? null : clip(event.outputHash);
  const failed = event.outcome !== "success";
  const calls = writable(d, state, "calls");
  for (let i = calls.recent.length - 1; i >= 0; i--) {
    const call = calls.recent[i];
    if (call !== undefined && call.sig === sig && call.out === null) {
      const own = writable(d, writable(d, calls, "recent"), i);
      own.out = out ?? "";
      own.failed = failed;
      break;
    }
  }
  if (sig === calls.sig && out !== null) {
    if (calls.sigOut === null) calls.sigOut = out;
    else if (calls.sigOut !== out) {
      // The same call produced something new: that is progress, so the identical-call streak restarts.
      calls.streak = 1;
      calls.sigOut = out;
    }
  }
  if (!failed) state.breaker = passProbe(state.breaker, event.at);

  const cls = failureClass(event);
  if (failed) {
    // Keyed on the error text alone: a failure that says nothing (grep finding no match) is no error to repeat.
    const error = clip(event.errorHash ?? "");
    if (error !== "" && error === calls.errorHash) calls.errorStreak += 1;
    else {
      calls.errorHash = error;
      calls.errorStreak = error === "" ? 0 : 1;
    }
    const classes = writable(d, state, "failureClasses");
    // A command run again after edits that now fails differently is a check of the change, not a retry.
    const prior = event.command === undefined ? undefined : state.resources[runKey(event.command)];
    const changed =
      prior !== undefined
        ? prior.edits < state.edits.total && prior.content !== (out ?? "")
        : event.command === undefined &&
          (event.writes?.length ?? 0) > 0 &&
          otherThanLastFailure(calls.recent, event.tool, sig);
    capSet(classes, cls, changed ? 1 : (classes[cls] ?? 0) + 1, CAPS.failureClasses);
  } else {
    calls.errorHash = "";
    calls.errorStreak = 0;
    if (cls in state.failureClasses && state.failureClasses[cls] !== 0)
      writable(d, state, "failureClasses")[cls] = 0;
  }

  if (failed && event.command === undefined && (event.writes?.length ?? 0) > 0) refusedEdit(d, state);
  if (event.command !== undefined) {
    const memoKey = runKey(event.command);
    const memo = state.resources[memoKey];
    if (memo !== undefined && memo.edits < state.edits.total && isOwnCheck(event)) {
      // The agent's own check (a reproduction script): run before the edits and again after them.
      if (state.edits.sinceVerification !== 0) writable(d, state, "edits").sinceVerification = 0;
    }
    const content = out ?? `#${state.seq}`; // an unknown output never matches another
    const sameContent = memo !== undefined && memo.content === content;
    const same = sameContent ? memo.same + 1 : 1;
    const quiet = sameContent && memo.edits === state.edits.total ? memo.quiet + 1 : 1;
    capSet(
      writable(d, state, "resources"),
      memoKey,
      { same, quiet, content, edits: state.edits.total },
      CAPS.resources,
    );
  }
}

/**
 * Whether a failed call of a tool without a command (an edit the editor refused) differs from the tool's
 * failed call before it: a new edit refused is not a retry of the last one.
 */
function otherThanLastFailure(recent: Shared<State["calls"]["recent"]>, tool: string, sig: string): boolean {
  let skipped = false;
  for (let i = recent.length - 1; i >= 0; i--) {
    const call = recent[i];
    if (call === undefined || call.tool !== tool || !call.failed) continue;
    // The newest failed call of the tool is this one.
    if (!skipped && call.sig === sig) {
      skipped = true;
      continue;
    }
    return call.sig !== sig;
  }
  return false;
}

/**
 * An edit the editor refused (a failed edit tool call: SWE-agent's str_replace_editor, a Claude Code Edit
 * whose text was not found) wrote nothing, so it is no edit: the counts its request raised go back.
 */
function refusedEdit(d: Draft, state: Own<State>): void {
  const edits = state.edits;
  if (edits.total === 0 && edits.sinceVerification === 0 && edits.sinceTests === 0) return;
  const w = writable(d, state, "edits");
  w.total = Math.max(0, w.total - 1);
  w.sinceVerification = Math.max(0, w.sinceVerification - 1);
  w.sinceTests = Math.max(0, w.sinceTests - 1);
}

/** A command that runs a program or script (not one that only shows or changes files). */
const RUNS_PROGRAM =
  /^\s*(?:cd\s+[^;&|]+(?:&&|;)\s*)?(?:(?:[A-Z_]+=\S*\s+)*)(?:python[0-9.]*|pytest|node|deno|ruby|perl|php|bash|sh|go\s+run|cargo\s+run|java|\.{0,2}\/[\w./-]+)\s/;

/** Whether a finished shell call can be the agent's own check: it runs a program and writes nothing. */
function isOwnCheck(event: ToolCompleted): boolean {
  return (event.writes?.length ?? 0) === 0 && RUNS_PROGRAM.test(`${event.command ?? ""} `);
}

function applyUsage(d: Draft, state: Own<State>, event: UsageRecorded, policy: Policy): void {
  const tokens =
    amount(event.inputTokens) +
    amount(event.outputTokens) +
    amount(event.cacheWriteTokens) +
    (policy.budget.countCacheReads ? amount(event.cacheReadTokens) : 0);
  const usd = amount(event.costUsd);
  const premium = amount(event.premiumRequests);
  charge(writableSpend(d, state, null), tokens, usd, premium);
  if (state.task !== "") charge(writableSpend(d, state, state.task), tokens, usd, premium);

  const window = Math.floor(event.at / policy.spendRate.windowMs);
  const buckets = writable(d, writable(d, state, "rate"), "buckets");
  const at = buckets.length - 1;
  if (buckets[at] !== undefined && buckets[at][0] === window) {
    const last = writable(d, buckets, at);
    last[1] += tokens;
    last[2] += usd;
  } else {
    pushCapped(buckets, [window, tokens, usd], CAPS.rateBuckets);
  }
}

/** Adds one usage event's amounts to a meter's spend, if the meter exists. */
function charge(
  spent: Opened<Shared<Spend>> | undefined,
  tokens: number,
  usd: number,
  premium: number,
): void {
  if (spent === undefined) return;
  spent.tokens += tokens;
  // Rounded to nano-dollars so that $0.10 + $0.70 is $0.80, not 0.7999999999999999.
  spent.usd = Math.round((spent.usd + usd) * 1e9) / 1e9;
  spent.premiumRequests += premium;
}

function applyVerification(d: Draft, state: Own<State>, event: VerificationRan): void {
  const name = clip(event.name);
  const raw = event.score ?? (event.passed ? 1 : 0);
  const score = Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : event.passed ? 1 : 0;
  const prev = state.checks[name];
  const greener = prev !== undefined && (score > prev.score || (event.passed && !prev.passed));
  capSet(
    writable(d, state, "checks"),
    name,
    {
      passed: event.passed,
      score,
      ranSeq: state.seq,
      passSeq: event.passed ? state.seq : (prev?.passSeq ?? -1),
      declines: prev !== undefined && score < prev.score ? prev.declines + 1 : 0,
      command: event.command !== undefined ? clip(event.command) : (prev?.command ?? null),
    },
    CAPS.checks,
  );
  const edits = writable(d, state, "edits");
  edits.sinceVerification = 0;
  if (name === "tests") edits.sinceTests = 0;
  if (event.passed) edits.unverifiedLines = 0;
  // A check failing with fewer failures than its last run is progress, not one more retry of a failing
  // command: the retry cap of its command starts again (a suite fixed one test at a time).
  const last = state.lastFailure ?? null;
  if (
    !event.passed &&
    event.command !== undefined &&
    last !== null &&
    last.check === name &&
    last.failing !== null &&
    typeof event.failing === "number" &&
    event.failing < last.failing
  ) {
    const cls = failureClass({ tool: "", command: event.command });
    if ((state.failureClasses[cls] ?? 0) !== 0) writable(d, state, "failureClasses")[cls] = 0;
  }
  countFailure(state, name, event);

  if (greener) state.files = {};
  for (const path of event.flagged ?? NO_ITEMS) {
    const key = clip(path);
    const file = state.files[key];
    if (file === undefined || file.lastIteration !== state.cycle) {
      capSet(
        writable(d, state, "files"),
        key,
        { iterations: (file?.iterations ?? 0) + 1, lastIteration: state.cycle },
        CAPS.files,
      );
    }
  }
}

/**
 * Failed checks count toward the breaker only while nothing improves (docs/architecture.md, "Guards": a
 * stop needs evidence): the same check failing the same way, with no fewer failing tests and no edit in
 * between. Anything else (a new failure, fewer failures, a fix attempted) starts the count again: a test
 * written to fail before its fix, then fixed step by step, is progress.
 */
function countFailure(state: Own<State>, name: string, event: VerificationRan): void {
  if (event.passed) {
    state.failedVerifications = 0;
    state.lastFailure = null;
    return;
  }
  const fingerprint = event.fingerprint === undefined ? null : clip(event.fingerprint);
  const failing =
    typeof event.failing === "number" && Number.isFinite(event.failing) ? Math.max(0, event.failing) : null;
  const last = state.lastFailure ?? null;
  const same =
    last !== null &&
    last.check === name &&
    last.fingerprint === fingerprint &&
    last.edits === state.edits.total &&
    !(failing !== null && last.failing !== null && failing < last.failing);
  state.failedVerifications = same ? state.failedVerifications + 1 : 1;
  state.lastFailure = { check: name, fingerprint, failing, edits: state.edits.total };
}

function applyExtension(d: Draft, state: Own<State>, event: BudgetExtended, policy: Policy): void {
  const added = amount(event.amount);
  const ref =
    event.meter === "task" && state.task !== "" ? ({ meter: "task", task: state.task } as const) : null;
  const meter = writableMeter(d, state, ref ?? SESSION_REF);
  if (meter === undefined) return;
  const extra = writable(d, meter, "extra");
  extra[event.resource] = (extra[event.resource] ?? 0) + added;
  const limit = limitOf(meter, ref ?? { meter: "session", task: "" }, event.resource, policy);
  const level = levelOf(utilization(usedOf(meter, event.resource, event.at), limit), policy);
  // Thresholds above the new utilisation fire again; the ones still reached stay fired.
  const fired = writable(d, meter, "fired");
  fired[event.resource] = Math.min(fired[event.resource] ?? LEVEL.none, level);
  if (meter.paused === event.resource && level < LEVEL.pause) meter.paused = null;
}
