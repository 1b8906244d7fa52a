/** The reducer: how each event changes the facts in a scope's state, apart from any guard's verdict. */
import { CAPS, LEVEL, cloneState, emptyMeter, type Meter, type State } from "./state.js";
import { halfOpenBreaker, passProbe, resetBreaker, settleBreaker } from "./breaker.js";
import { amount, capSet, clip, pushCapped } from "./capped.js";
import { churnLevel } from "./churn-level.js";
import { assertNever } from "./errors.js";
import type {
  BudgetExtended,
  ReinsEvent,
  ToolCompleted,
  ToolRequested,
  UsageRecorded,
  VerificationRan,
} from "./events.js";
import { callSignature, commandKey, failureClass } from "./keys.js";
import { levelOf, limitOf, usedOf, utilization } from "./meter.js";
import { defaultPolicy, type Policy } from "./policy.js";

/**
 * Folds one event into the facts of a scope, in place. The policy only sizes windows and supplies the
 * breaker's timeouts; verdicts and the state changes they cause come from the guards (see engine.ts).
 */
export function applyEvent(state: State, event: ReinsEvent, policy: Policy): void {
  const at = event.at;
  if (state.startedAt === null) {
    state.startedAt = at;
    state.budget.session.startedAt = at;
  }
  state.lastAt = at;
  if (event.task !== undefined && event.task !== "") enterTask(state, clip(event.task), at);
  settle(state, at, policy);

  switch (event.kind) {
    case "session.started":
      state.ended = false;
      break;
    case "session.ended":
      state.ended = true;
      break;
    case "task.started": {
      const meter = state.budget.tasks[state.task];
      if (meter !== undefined && event.taskType !== undefined) meter.taskType = clip(event.taskType);
      if (!state.inFlight.includes(state.task)) pushCapped(state.inFlight, state.task, CAPS.inFlight);
      break;
    }
    case "task.ended": {
      state.inFlight = state.inFlight.filter((t) => t !== state.task);
      if (event.status === "failed") recordTaskFailure(state, state.task);
      if (event.status === "done") capSet(state.churn, state.task, { failures: 0, confirmed: 0 }, CAPS.churn);
      break;
    }
    case "tool.requested":
      applyRequest(state, event, policy);
      break;
    case "tool.completed":
      applyCompletion(state, event);
      break;
    case "usage.recorded":
      applyUsage(state, event, policy);
      break;
    case "verification.ran":
      applyVerification(state, event);
      break;
    case "iteration.ended":
      state.iterations += 1;
      state.cycle += 1;
      if (event.outcome === "failure") recordTaskFailure(state, state.task);
      if (event.outcome === "success")
        capSet(state.churn, state.task, { failures: 0, confirmed: 0 }, CAPS.churn);
      break;
    case "completion.claimed":
      break;
    case "human.budget_extended":
      applyExtension(state, event, policy);
      break;
    case "human.budget_reset": {
      const taskType = state.budget.tasks[state.task]?.taskType ?? null;
      state.budget = { session: emptyMeter(at), tasks: {} };
      if (state.task !== "") state.budget.tasks[state.task] = emptyMeter(at, taskType);
      state.rate = { buckets: [], firedWindow: -1 };
      break;
    }
    case "human.circuit_acknowledged":
      state.breaker = halfOpenBreaker(state.breaker);
      clearAnomalies(state);
      break;
    case "human.circuit_reset":
      state.breaker = resetBreaker(state.breaker);
      clearAnomalies(state);
      break;
    case "human.alert_acknowledged":
    case "human.spec_approved":
      break;
    case "human.confirmed": {
      // A person's confirmation also lets one call on reins' own files through (self-protection); at most
      // one waits, so a confirmation long ago is not a standing permission.
      state.protectionGrants = 1;
      const memo = state.churn[state.task];
      if (memo !== undefined) memo.confirmed = churnLevel(memo.failures, policy);
      break;
    }
    default:
      assertNever(event);
  }
  state.seq += 1;
}

/** A pure fold: returns the state after `event`, leaving `state` untouched. */
export function reduce(state: State, event: ReinsEvent, policy: Policy = defaultPolicy): State {
  const next = cloneState(state);
  applyEvent(next, event, policy);
  return next;
}

function enterTask(state: State, task: string, at: number): void {
  state.task = task;
  if (state.budget.tasks[task] === undefined) capSet(state.budget.tasks, task, emptyMeter(at), CAPS.tasks);
}

function recordTaskFailure(state: State, task: string): void {
  const memo = state.churn[task] ?? { failures: 0, confirmed: 0 };
  capSet(state.churn, task, { failures: memo.failures + 1, confirmed: memo.confirmed }, CAPS.churn);
}

/** The breaker's moves with time (see settleBreaker). */
function settle(state: State, at: number, policy: Policy): void {
  const next = settleBreaker(state.breaker, at, policy.circuit);
  // Half-opened by the timeout, as after an acknowledgement: the counters that tripped it would trip the
  // probe at once.
  if (state.breaker.status === "open" && next.status === "half_open") clearAnomalies(state);
  state.breaker = next;
}

function clearAnomalies(state: State): void {
  const calls = state.calls;
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

function applyRequest(state: State, event: ToolRequested, policy: Policy): void {
  const calls = state.calls;
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
  pushCapped(calls.times, event.at, policy.circuit.rapidFireThreshold);
  const shape = event.shapeHash === undefined ? sig : clip(`${event.tool}#${event.shapeHash}`);
  const label = clip(event.command ?? event.writes?.[0] ?? event.reads?.[0] ?? event.tool);
  const last = calls.recent[calls.recent.length - 1];
  // Retrying a call that never came back (it was refused) is not a new call: it must not push an A-B-A-B
  // loop out of the window and so turn its block into an allow.
  if (last === undefined || last.sig !== sig || last.out !== null)
    pushCapped(
      calls.recent,
      { sig, shape, tool: clip(event.tool), label, out: null, failed: false },
      CAPS.recentCalls,
    );

  state.budget.session.spent.toolCalls += 1;
  const task = state.budget.tasks[state.task];
  if (state.task !== "" && task !== undefined) task.spent.toolCalls += 1;

  for (const path of event.reads ?? []) {
    const key = clip(path);
    capSet(state.reads, key, (state.reads[key] ?? 0) + 1, CAPS.reads);
  }
  const writes = event.writes ?? [];
  if (writes.length === 0) return;
  const edits = state.edits;
  // A new edit round starts with the first edit after a check: thrashing counts rounds, not single edits.
  if (edits.sinceVerification === 0) state.cycle += 1;
  edits.total += 1;
  edits.lastSeq = state.seq;
  edits.sinceVerification += 1;
  edits.sinceTests += 1;
  edits.unverifiedLines += Math.max(0, Math.min(event.linesChanged ?? 0, 1e9)) || 0; // NaN counts as 0
  for (const path of writes) {
    const key = clip(path);
    if (key in state.reads) state.reads[key] = 0;
    const file = state.files[key];
    if (file === undefined || file.lastIteration !== state.cycle) {
      capSet(
        state.files,
        key,
        { iterations: (file?.iterations ?? 0) + 1, lastIteration: state.cycle },
        CAPS.files,
      );
    }
    const memoKey = `write:${key}`;
    const memo = state.resources[memoKey];
    const content = clip(event.inputHash);
    const same = memo !== undefined && memo.content === content ? memo.same + 1 : 1;
    capSet(state.resources, memoKey, { same, quiet: same, content, edits: edits.total }, CAPS.resources);
  }
}

function applyCompletion(state: State, event: ToolCompleted): void {
  const sig = callSignature(event);
  const out = event.outputHash === undefined ? null : clip(event.outputHash);
  const failed = event.outcome !== "success";
  for (let i = state.calls.recent.length - 1; i >= 0; i--) {
    const call = state.calls.recent[i];
    if (call !== undefined && call.sig === sig && call.out === null) {
      call.out = out ?? "";
      call.failed = failed;
      break;
    }
  }
  const calls = state.calls;
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
    capSet(state.failureClasses, cls, (state.failureClasses[cls] ?? 0) + 1, CAPS.failureClasses);
  } else {
    calls.errorHash = "";
    calls.errorStreak = 0;
    if (cls in state.failureClasses) state.failureClasses[cls] = 0;
  }

  if (event.command !== undefined) {
    const memoKey = `run:${commandKey(event.command)}`;
    const memo = state.resources[memoKey];
    const content = out ?? `#${state.seq}`; // an unknown output never matches another
    const sameContent = memo !== undefined && memo.content === content;
    const same = sameContent ? memo.same + 1 : 1;
    const quiet = sameContent && memo.edits === state.edits.total ? memo.quiet + 1 : 1;
    capSet(state.resources, memoKey, { same, quiet, content, edits: state.edits.total }, CAPS.resources);
  }
}

function applyUsage(state: State, event: UsageRecorded, policy: Policy): void {
  const tokens =
    amount(event.inputTokens) +
    amount(event.outputTokens) +
    amount(event.cacheWriteTokens) +
    (policy.budget.countCacheReads ? amount(event.cacheReadTokens) : 0);
  const usd = amount(event.costUsd);
  const premium = amount(event.premiumRequests);
  const charge = (meter: Meter) => {
    meter.spent.tokens += tokens;
    // Rounded to nano-dollars so that $0.10 + $0.70 is $0.80, not 0.7999999999999999.
    meter.spent.usd = Math.round((meter.spent.usd + usd) * 1e9) / 1e9;
    meter.spent.premiumRequests += premium;
  };
  charge(state.budget.session);
  const task = state.budget.tasks[state.task];
  if (state.task !== "" && task !== undefined) charge(task);

  const window = Math.floor(event.at / policy.spendRate.windowMs);
  const buckets = state.rate.buckets;
  const last = buckets[buckets.length - 1];
  if (last !== undefined && last[0] === window) {
    last[1] += tokens;
    last[2] += usd;
  } else {
    pushCapped(buckets, [window, tokens, usd], CAPS.rateBuckets);
  }
}

function applyVerification(state: State, event: VerificationRan): void {
  const name = clip(event.name);
  const raw = event.score ?? (event.passed ? 1 : 0);
  const score = Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : event.passed ? 1 : 0;
  const prev = state.checks[name];
  const greener = prev !== undefined && (score > prev.score || (event.passed && !prev.passed));
  capSet(
    state.checks,
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
  const edits = state.edits;
  edits.sinceVerification = 0;
  if (name === "tests") edits.sinceTests = 0;
  if (event.passed) edits.unverifiedLines = 0;
  countFailure(state, name, event);

  if (greener) state.files = {};
  for (const path of event.flagged ?? []) {
    const key = clip(path);
    const file = state.files[key];
    if (file === undefined || file.lastIteration !== state.cycle) {
      capSet(
        state.files,
        key,
        { iterations: (file?.iterations ?? 0) + 1, lastIteration: state.cycle },
        CAPS.files,
      );
    }
  }
}

/**
 * Failed checks count toward the breaker only while nothing improves (DESIGN.md: a stop needs evidence):
 * the same check failing the same way, with no fewer failing tests and no edit in between. Anything else
 * (a new failure, fewer failures, a fix attempted) starts the count again: a test written to fail before
 * its fix, then fixed step by step, is progress.
 */
function countFailure(state: State, name: string, event: VerificationRan): void {
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

function applyExtension(state: State, event: BudgetExtended, policy: Policy): void {
  const added = amount(event.amount);
  const ref =
    event.meter === "task" && state.task !== "" ? ({ meter: "task", task: state.task } as const) : null;
  const meter = ref === null ? state.budget.session : state.budget.tasks[state.task];
  if (meter === undefined) return;
  meter.extra[event.resource] = (meter.extra[event.resource] ?? 0) + added;
  const limit = limitOf(meter, ref ?? { meter: "session", task: "" }, event.resource, policy);
  const level = levelOf(utilization(usedOf(meter, event.resource, event.at), limit), policy);
  // Thresholds above the new utilisation fire again; the ones still reached stay fired.
  meter.fired[event.resource] = Math.min(meter.fired[event.resource] ?? LEVEL.none, level);
  if (meter.paused === event.resource && level < LEVEL.pause) meter.paused = null;
}
