/** Which checks a unit of work runs when: before its first iteration, after each, and before its commit. */
import { ancestorsOf, leavesUnder, own } from "./graph.js";
import type { CheckResult, CheckTier, RunState } from "./types.js";

type Plan = Pick<RunState, "nodes" | "checks" | "tasks">;

/** The names of `tier` checks among `names`, plus every check of the plan when `all`, in the plan's order. */
function pick(state: Plan, tier: CheckTier, names: ReadonlySet<string>, all = false): string[] {
  return Object.values(state.checks)
    .filter((c) => c.tier === tier && (all || names.has(c.name)))
    .map((c) => c.name);
}

/** The checks a leaf names, with `ancestors` those its ancestors name too. */
function named(state: Plan, leaf: string, ancestors: boolean): Set<string> {
  const ids = ancestors ? [leaf, ...ancestorsOf(state.nodes, leaf)] : [leaf];
  return new Set(ids.flatMap((id) => own(state.nodes, id)?.checks ?? []));
}

/** Whether a check names `leaf`: its own, or one of its ancestors'. Only those can show it already done. */
export function namesChecks(state: Plan, leaf: string): boolean {
  return named(state, leaf, true).size > 0;
}

/**
 * The no-op check, before the first iteration: every fast check of the plan, the medium checks the leaf
 * and its ancestors name, and the slow ones the leaf itself names. All green closes the task unworked.
 */
export function noopGate(state: Plan, leaf: string): string[] {
  const all = named(state, leaf, true);
  const mine = named(state, leaf, false);
  return [...pick(state, "fast", all, true), ...pick(state, "medium", all), ...pick(state, "slow", mine)];
}

/** The iteration gate, after every iteration: the fast checks, and the medium ones when a boundary moved. */
export function iterationGate(state: Plan, leaf: string, boundaryTouched: boolean): string[] {
  const fast = pick(state, "fast", new Set(), true);
  return boundaryTouched ? [...fast, ...pick(state, "medium", named(state, leaf, true))] : fast;
}

/**
 * The ancestors (components, modules) this leaf's completion completes: every other leaf under them is done.
 * Their slow checks belong to this leaf's completion gate.
 */
export function completedAncestors(state: Plan, leaf: string): string[] {
  return ancestorsOf(state.nodes, leaf).filter((id) =>
    leavesUnder(state.nodes, id).every((l) => l === leaf || own(state.tasks, l)?.status === "done"),
  );
}

/**
 * The completion gate, once the iteration gate is green: the medium checks that gate did not run, the slow
 * checks the leaf names, and those of every ancestor its completion completes.
 */
export function completionGate(state: Plan, leaf: string, boundaryTouched: boolean): string[] {
  const slow = new Set(
    [leaf, ...completedAncestors(state, leaf)].flatMap((id) => own(state.nodes, id)?.checks ?? []),
  );
  const medium = boundaryTouched ? [] : pick(state, "medium", named(state, leaf, true));
  return [...medium, ...pick(state, "slow", slow)];
}

/**
 * Splits `names` by the run's slow-check budget: every fast and medium check runs, slow ones run while the
 * budget lasts (in order) and the rest are skipped.
 */
export function spendSlow(
  state: Plan & Pick<RunState, "slowCheckRuns" | "settings">,
  names: readonly string[],
): { run: string[]; skipped: string[]; slow: number } {
  let left = Math.max(0, state.settings.slowCheckRuns - state.slowCheckRuns);
  const run: string[] = [];
  const skipped: string[] = [];
  let slow = 0;
  for (const name of names) {
    if (own(state.checks, name)?.tier !== "slow") run.push(name);
    else if (left > 0) {
      left -= 1;
      slow += 1;
      run.push(name);
    } else skipped.push(name);
  }
  return { run, skipped, slow };
}

/** The evidence of a slow check skipped for budget: not passed, not failed, and saying why. */
export function skippedResult(name: string): CheckResult {
  return {
    name,
    tier: "slow",
    passed: false,
    skipped: true,
    exitCode: null,
    failedTests: [],
    output: "skipped: slow-check budget spent",
    durationMs: 0,
  };
}

/** Whether a result is red: it ran and did not pass (a skipped check is neither). */
export function isRed(result: CheckResult): boolean {
  return !result.passed && result.skipped !== true;
}
