/**
 * The driver of `reins run`: hands the control core's actions to the outside world, feeds their results
 * back as events, records both, and saves a checkpoint in the store after every step.
 */
import { begin, RUN_KEY, step, type StepResult } from "../control/index.js";
import type { RunAction, RunDecision, RunEvent, RunState } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import { perform, type DriveContext } from "./actions.js";
import { checkpointOf, type Checkpoint } from "./checkpoint.js";
import { driftOf, runSpecHashes } from "./drift.js";
import type { KeyedAction, RunTraceLine } from "./run-trace.js";
import { DivergenceError } from "./recorder.js";

/** How a drive ended. */
export interface DriveEnd {
  state: RunState;
  /** Set when the core asked to finish; null when the run was interrupted. */
  finished: { proven: boolean } | null;
}

type Step = Extract<RunTraceLine, { t: "step" }>;

/** What one carried-out action came back with. */
interface Answered {
  key: string;
  event: RunEvent;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Names the first difference between what a replay did and what was recorded. */
function compare(
  recorded: Step,
  key: string,
  event: RunEvent,
  decisions: RunDecision[],
  actions: KeyedAction[],
) {
  const where = `step ${recorded.n} (${recorded.event.kind})`;
  if (recorded.key !== key)
    throw new DivergenceError(`${where}: recorded an answer to ${recorded.key}, replay got ${key}`);
  if (!same(recorded.event, event))
    throw new DivergenceError(
      `${where}: recorded event ${JSON.stringify(recorded.event).slice(0, 300)}, replay made ${JSON.stringify(event).slice(0, 300)}`,
    );
  if (!same(recorded.decisions, decisions))
    throw new DivergenceError(
      `${where}: recorded decisions ${JSON.stringify(recorded.decisions).slice(0, 300)}, replay made ${JSON.stringify(decisions).slice(0, 300)}`,
    );
  if (!same(recorded.actions, actions))
    throw new DivergenceError(
      `${where}: recorded actions ${JSON.stringify(recorded.actions).slice(0, 300)}, replay made ${JSON.stringify(actions).slice(0, 300)}`,
    );
}

/**
 * Runs the loop from `start` (a fresh run's `run.started`, or a resumed run's `run.resumed`) until the
 * core asks to finish or the signal aborts. In replay, answers are taken in the recorded order and every
 * step is compared with the recorded one; the first difference throws a `DivergenceError`.
 */
export async function drive(
  ctx: DriveContext,
  start: { state: RunState | null; key: string; event: RunEvent },
): Promise<DriveEnd> {
  const pending = new Map<string, Promise<Answered>>();
  let finished: { proven: boolean } | null = null;
  let state: RunState;

  // An action's key is its ref (the step that handed it out) and its task: unique within the run, so its
  // results are recorded and replayed under it.
  const handOut = (actions: RunAction[]): KeyedAction[] =>
    actions.map((action) => ({
      key: action.kind === "finish" ? "finish" : `${action.ref}:${"task" in action ? action.task : ""}`,
      action,
    }));

  const launch = (keyed: KeyedAction[]) => {
    for (const { key, action } of keyed) {
      if (action.kind === "finish") {
        finished = { proven: action.proven };
        continue;
      }
      const answered = perform(ctx, key, action).then((event) => ({ key, event }));
      // A rejection is read when the loop awaits it; until then it must not count as unhandled.
      answered.catch(() => undefined);
      pending.set(key, answered);
    }
  };

  const record = (key: string, event: RunEvent, decisions: RunDecision[], actions: KeyedAction[]) => {
    const n = ctx.keys.step++;
    if (ctx.replay !== null) {
      const recorded = ctx.replay.steps[n];
      if (recorded === undefined)
        throw new DivergenceError(`step ${n}: the replay went on past the recorded run`);
      compare(recorded, key, event, decisions, actions);
    } else ctx.trace?.write({ t: "step", n, key, event, decisions, actions });
  };

  // Whether an action handed out is still awaited: a spec change fed in between may have dropped it.
  const awaited = ({ action }: KeyedAction) => {
    if (action.kind === "finish") return true;
    const key = "task" in action ? action.task : RUN_KEY;
    return state.inFlight[key] === action.kind && state.refs[key] === action.ref;
  };

  /** Records a step, saves the checkpoint, looks for spec drift when it is due, then starts the actions. */
  const take = async (key: string, event: RunEvent, result: StepResult): Promise<void> => {
    const keyed = handOut(result.actions);
    record(key, event, result.decisions, keyed);
    state = result.state;
    ctx.state = state;
    await save(ctx, state);
    ctx.progress(state, result.decisions);
    // Drift is looked for on resume and before an iteration starts, under the key of that resume or of
    // the (first) iteration: its results are recorded there and a replay reads them back in order.
    const due = event.kind === "run.resumed" ? key : keyed.find((k) => k.action.kind === "run_agent")?.key;
    if (due !== undefined) await drift(due);
    launch(keyed.filter(awaited));
  };

  /**
   * Compares the spec with the recorded hashes. A change goes to the core as its own step; either way the
   * hashes read become the recorded ones.
   */
  const drift = async (key: string): Promise<void> => {
    const after = await runSpecHashes(ctx.recorder, key, ctx.root, state);
    if (after === null) return;
    const change = driftOf(ctx.spec, after, state);
    ctx.spec = after;
    if (change === null) return;
    const at = await ctx.recorder.io(key, "clock", () => Promise.resolve(Date.now()));
    const event: RunEvent = { ...change, at };
    await take(`${key}/spec`, event, step(state, event));
  };

  const first =
    start.state === null
      ? begin(start.event as Extract<RunEvent, { kind: "run.started" }>)
      : step(start.state, start.event);
  state = first.state;
  await take(start.key, start.event, first);

  while (finished === null) {
    if (ctx.signal?.aborted === true) return { state, finished: null };
    if (pending.size === 0)
      throw new ReinsError(
        "invalid_trace",
        "the run has nothing in flight and nothing to do (a bug in the control core)",
      );
    let next: Answered;
    if (ctx.replay !== null) {
      const recorded = ctx.replay.steps[ctx.keys.step];
      if (recorded === undefined)
        throw new DivergenceError(`step ${ctx.keys.step}: the recorded run ends here, the replay goes on`);
      if (recorded.event.kind === "run.resumed") {
        // The recorded run crashed here: whatever was in flight was dropped, and the resume went on.
        pending.clear();
        next = { key: recorded.key, event: await ctx.resumeEvent(recorded.key, state) };
      } else {
        const answer = pending.get(recorded.key);
        if (answer === undefined)
          throw new DivergenceError(
            `step ${recorded.n}: recorded an answer to ${recorded.key}, which the replay never asked for`,
          );
        next = await answer;
      }
    } else {
      const raced = await Promise.race([...pending.values(), ctx.aborted]);
      if (raced === null) return { state, finished: null };
      next = raced;
    }
    pending.delete(next.key);
    await take(next.key, next.event, step(state, next.event));
  }
  return { state, finished };
}

/** Saves the checkpoint after a step: the trace first (synced), then the store record that points into it. */
async function save(ctx: DriveContext, state: RunState): Promise<void> {
  if (ctx.replay !== null || ctx.trace === null) return;
  ctx.trace.sync();
  const checkpoint: Checkpoint = {
    meta: ctx.meta,
    state,
    traceBytes: ctx.trace.bytes,
    keys: { ...ctx.keys },
    worktrees: Object.fromEntries(ctx.worktrees),
    ...(ctx.spec !== null ? { spec: ctx.spec } : {}),
    tip: ctx.tip,
  };
  await ctx.store.saveRun(checkpointOf(checkpoint, Date.now()));
}
