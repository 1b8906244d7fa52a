import { advance, type Decision } from "../core/engine.js";
import type { ReinsEvent } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import { initialState, type State } from "../core/state.js";
import type { ScriptedAgent } from "./agents.js";

/** One event of a scripted run and what reins decided. */
export interface Entry {
  event: ReinsEvent;
  decision: Decision;
}

/** A scripted agent's run through the engine, with the figures of the demo's summary table. */
export interface AgentRun {
  agent: ScriptedAgent;
  scope: string;
  entries: Entry[];
  state: State;
  calls: number;
  /** Tool calls the agent asked for after reins first warned or blocked. */
  callsAfterTrouble: number;
  tokens: number;
  /** The first block, or null when nothing was ever blocked. */
  firstBlock: Entry | null;
  finished: boolean;
}

/**
 * Runs a scripted agent through the engine, feeding every decision back to the script. Time starts at
 * `start` and moves on one second per event, plus the script's own waits.
 */
export function runAgent(
  agent: ScriptedAgent,
  policy: Policy,
  start: number,
  onEntry?: (entry: Entry) => void,
): AgentRun {
  const scope = `session:demo-${agent.name}`;
  const state = initialState(scope);
  const entries: Entry[] = [];
  let now = start;
  let trouble = false;
  let calls = 0;
  let callsAfterTrouble = 0;
  let firstBlock: Entry | null = null;
  let finished = false;
  const script = agent.script();
  let next = script.next();
  while (next.done !== true) {
    const action = next.value;
    if ("wait" in action) {
      now += action.wait;
      next = script.next();
      continue;
    }
    const event = { ...action, at: now, scope };
    now += 1_000;
    const decision = advance(state, event, policy);
    const entry = { event, decision };
    entries.push(entry);
    onEntry?.(entry);
    if (event.kind === "tool.requested") {
      calls += 1;
      if (trouble) callsAfterTrouble += 1;
    }
    if (decision.verdict !== "allow") trouble = true;
    if (decision.verdict === "block" && firstBlock === null) firstBlock = entry;
    if (event.kind === "completion.claimed" && decision.verdict !== "block") finished = true;
    next = script.next(decision);
  }
  return {
    agent,
    scope,
    entries,
    state,
    calls,
    callsAfterTrouble,
    tokens: state.budget.session.spent.tokens,
    firstBlock,
    finished,
  };
}
