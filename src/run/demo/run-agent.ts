/** Runs a scripted agent through the engine or a store, keeping each event and its decision. */
import type { Decision } from "../../base/core/decision.js";
import { advance } from "../../base/core/engine.js";
import type { ReinsEvent } from "../../base/core/reins-event.js";
import type { Policy } from "../../base/core/policy.js";
import { initialState, type State } from "../../base/core/state.js";
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
  calls: number;
  /** Tool calls the agent asked for after reins first warned or blocked. */
  callsAfterTrouble: number;
  tokens: number;
  /** The first block, or null when nothing was ever blocked. */
  firstBlock: Entry | null;
  finished: boolean;
}

/** Decides one event: in memory for the pure demo, through a store for `reins demo`. */
export type DecideFn = (event: ReinsEvent) => Decision | Promise<Decision>;

/** Decides in memory with the engine, on a state of its own. */
export function inMemory(scope: string, policy: Policy): { decide: DecideFn; state: State } {
  const state = initialState(scope);
  return { state, decide: (event) => advance(state, event, policy) };
}

/**
 * Runs a scripted agent, feeding every decision back to the script. Time starts at `start` and moves on
 * one second per event, plus the script's own waits.
 */
export async function runAgent(
  agent: ScriptedAgent,
  scope: string,
  start: number,
  decide: DecideFn,
  onEntry?: (entry: Entry) => void,
): Promise<AgentRun> {
  const entries: Entry[] = [];
  let now = start;
  let trouble = false;
  let calls = 0;
  let callsAfterTrouble = 0;
  let tokens = 0;
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
    const decision = await decide(event);
    if (event.kind === "usage.recorded")
      tokens += (event.inputTokens ?? 0) + (event.outputTokens ?? 0) + (event.cacheWriteTokens ?? 0);
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
    calls,
    callsAfterTrouble,
    tokens,
    firstBlock,
    finished,
  };
}
