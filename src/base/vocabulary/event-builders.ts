/** The events a tool call's end, a claim of done and a prompt become, and their scope and time (`eventsAt`). */
import type { EventInput, ReinsEvent, ToolTouch } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import { checkOf, checkPatterns, checkResult } from "./check-match.js";
import { outputShape } from "./shapes.js";
import { pipelineOfLast } from "./shell.js";
import { failureFingerprint } from "./test-summary.js";
import { canonical, hashOf } from "./hash.js";
import { shapeOf } from "./tool-touch.js";

const taskOf = (task: string | undefined) => (task !== undefined && task !== "" ? { task } : {});

/** How a tool call ended, as the adapter read it from the agent's input. */
export interface ToolOutcome {
  failed: boolean;
  /** The command's exit code, when the agent reported it (or its own record holds it). */
  exitCode?: number;
  /** What the call printed, as text: the error for a failure; check results and error keys are read from it. */
  text: string;
  /** What the call produced, as the agent reported it; hashed with noise removed, so equal means unchanged. */
  output: unknown;
}

/**
 * What identifies a failure's error: its text with noise (times, ids, numbers) removed, hashed. The agent's
 * exit-status line says nothing of the error, and a failure with no text at all (grep finding nothing) has
 * no error to repeat: it gets no key.
 */
function errorKey(errorText: string): { errorHash?: string } {
  const text = errorText
    .slice(0, 4_000)
    .replace(/^\s*(?:Exit code:?|Process exited with code|Exit Code:)\s*-?\d+\s*$/gim, "")
    .trim();
  return text === "" ? {} : { errorHash: shapeOf(canonical(text)) };
}

/**
 * A finished tool call: `tool.completed`, plus `verification.ran` when its command is one of the policy's
 * checks and the call gave evidence of the result (its own exit code, or a test summary in its output); a
 * check without evidence did not run, as far as reins can tell.
 */
export function toolEndEvents(
  touch: ToolTouch,
  outcome: ToolOutcome,
  policy: Policy,
  task?: string,
): EventInput[] {
  const output = outcome.output ?? null;
  const events: EventInput[] = [
    {
      kind: "tool.completed",
      ...taskOf(task),
      ...touch,
      outcome: outcome.failed ? "failure" : "success",
      outputHash: hashOf(outputShape(typeof output === "string" ? output : canonical(output))),
      ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
      ...(outcome.failed ? errorKey(outcome.text) : {}),
    },
  ];
  const command = touch.command;
  if (command === undefined) return events;
  const pipeline = pipelineOfLast(command);
  const check = checkOf(pipeline, checkPatterns(policy));
  if (check === null) return events;
  // A check that failed with no exit code or summary to read (a timeout, an interrupt) did not pass: that
  // much is evidence. One with no evidence either way did not run, as far as reins can tell.
  const result =
    checkResult(pipeline, outcome.exitCode, outcome.text, check.stage) ??
    (outcome.failed ? { passed: false } : null);
  if (result === null) return events;
  events.push({
    kind: "verification.ran",
    ...taskOf(task),
    name: check.name,
    passed: result.passed,
    command,
    tier: "fast",
    ...(result.failing !== undefined ? { failing: result.failing } : {}),
    ...(result.passed ? {} : { fingerprint: hashOf(failureFingerprint(outcome.text)) }),
  });
  return events;
}

/** The agent's "done": a session-level claim, with whether its last message holds the completion promise. */
export function claimEvent(policy: Policy, lastMessage: unknown, task?: string): EventInput {
  const promise = policy.completion.promise;
  const last = typeof lastMessage === "string" ? lastMessage : canonical(lastMessage ?? "");
  return {
    kind: "completion.claimed",
    ...taskOf(task),
    level: "session",
    ...(promise !== null ? { promiseMet: last.includes(promise) } : {}),
  };
}

/** How `promptTaskEvents` treats a prompt under the id of the task still in flight. */
export interface PromptTaskOptions {
  /**
   * `continue`: the task goes on (a turn's prompts share its id); `restart`: it ends (done) and starts
   * anew. @default "continue"
   */
  sameTask?: "continue" | "restart";
}

/**
 * A new prompt (turn) as tasks named `<prefix><id>`: the previous one of that kind still in flight ends
 * (done), the new one starts. Needs the scope's state before the call.
 */
export function promptTaskEvents(
  before: State | null,
  task: string | undefined,
  prefix: string,
  options: PromptTaskOptions = {},
): EventInput[] {
  const events: EventInput[] = [];
  const previous = before?.task ?? "";
  const ends = previous !== task || options.sameTask === "restart";
  if (previous.startsWith(prefix) && ends && before?.inFlight.includes(previous) === true) {
    events.push({ kind: "task.ended", task: previous, status: "done" });
  }
  if (task !== undefined && task !== "") events.push({ kind: "task.started", task, taskType: "prompt" });
  return events;
}

/** `inputs` as events of `scope` at `at` (epoch ms), in order. */
export function eventsAt(scope: string, at: number, inputs: readonly EventInput[]): ReinsEvent[] {
  return inputs.map((input) => ({ ...input, at, scope }));
}
