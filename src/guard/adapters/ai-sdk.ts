/**
 * reins for the Vercel AI SDK (`ai` 6): one agent session as governed tools, a `stopWhen` condition and an
 * `onStepFinish` that records each model call's usage. Only the SDK's types are imported: loading
 * `reins/ai-sdk` never loads `ai`.
 */
import type { LanguageModelUsage, ToolExecutionOptions, ToolSet } from "ai";
import type { Answer, Decision, EventInput } from "../../base/core/index.js";
import {
  eventsAt,
  toolEndEvents,
  toolTouch,
  usageEvent,
  type ToolOutcome,
} from "../../base/vocabulary/events.js";
import type { Governor } from "../governor.js";
import { reasonOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { defaultOutput, failureOf, outcomeOf, withNote, type ModelOutput } from "./ai-sdk-results.js";
import { reinsStop, type ReinsStop } from "./stop.js";
import type { SdkAgentName } from "./names.js";

/** How reins names the agent in a session's `session.started`. */
const AGENT: SdkAgentName = "ai-sdk";

export type { ReinsStop } from "./stop.js";

export interface GovernSessionOptions {
  /** The session's id: its events go to the scope `session:<id>`. */
  session: string;
  /**
   * The built-in tool each of your tools acts like, by your tool's name (`{ run: "Bash", open: "Read" }`),
   * so that reins sees its command or files: `Bash` takes `command`, `Read`, `Write` and `Edit` take
   * `file_path` or `path` (see README "Use reins as a library"). Calls are recorded under your names.
   * @default {}
   */
  like?: Readonly<Record<string, string>>;
  /**
   * After a stop the model was told of in a tool result (a denied call, a tripped breaker), one more step
   * so that it reads it and answers in words; every tool call in that step is denied. `false` ends the loop
   * at once. A stop from usage (a spent budget) always ends it at once.
   * @default true
   */
  finalAnswer?: boolean;
}

/**
 * Why reins ended the session's loop (a person must act: extend a budget, acknowledge the breaker, confirm),
 * and the event it answered: a tool call asked for or ended, or a model call's usage.
 */
export interface ReinsStopAt extends ReinsStop {
  event: "tool.requested" | "tool.completed" | "usage.recorded";
}

/** What reins reads of a step (the SDK's `StepResult`): its model call's usage, response id and model. */
export interface StepUsage {
  usage: LanguageModelUsage;
  response: { id: string; modelId: string };
}

/** One agent session under reins, in the AI SDK's terms. Made by `governSession`; one per run of the loop. */
export interface GovernedSession {
  /** The scope of the session's events, `session:<id>`. */
  readonly scope: string;
  /**
   * `tools` with each `execute` governed: the call is recorded as asked for first, and a denied call does not
   * run (its error, a `ReinsDenied`, is reins' reason, which the model reads); its end is recorded after,
   * with a check's result when its command is one. reins' advice is added to the result the model reads.
   */
  readonly tools: <T extends ToolSet>(tools: T) => T;
  /** For `stopWhen` (alone or beside `stepCountIs(n)`): true once reins has stopped the session. */
  readonly stopWhen: (options: { steps: readonly unknown[] }) => boolean;
  /** For `onStepFinish`: records the step's usage, priced by the policy, once per model response. */
  readonly onStepFinish: (step: StepUsage) => Promise<void>;
  /** The first stop reins made in this session, or null while it may go on. */
  readonly stop: ReinsStopAt | null;
}

const brand = Symbol.for("reins.denied");

/** A tool call reins denied, thrown by the governed `execute`: the SDK gives the model its message. */
export class ReinsDenied extends Error {
  readonly decision: Decision;
  readonly [brand] = true;

  constructor(reason: string, decision: Decision) {
    super(reason);
    this.name = "ReinsDenied";
    this.decision = decision;
  }

  /** True for any ReinsDenied, even one from another copy of the package. */
  static is(value: unknown): value is ReinsDenied {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

/** A tool as the adapter handles it, whatever its input and output types. */
interface AnyTool {
  execute?: (input: unknown, options: ToolExecutionOptions) => unknown;
  toModelOutput?: (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  value !== null && typeof value === "object" && Symbol.asyncIterator in value;

async function lastOf(parts: AsyncIterable<unknown>): Promise<unknown> {
  let last: unknown;
  for await (const part of parts) last = part;
  return last;
}

/** A tool whose `execute` is an `async function*` streams preliminary results; the governed one must too. */
const isAsyncGeneratorFunction = (fn: unknown) =>
  Object.prototype.toString.call(fn) === "[object AsyncGeneratorFunction]";

/** The tokens of a step's usage as reins counts them: input without the cache, cache reads and writes apart. */
function usageTokens(usage: LanguageModelUsage) {
  const cacheRead = usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.inputTokenDetails?.cacheWriteTokens ?? 0;
  const input =
    usage.inputTokenDetails?.noCacheTokens ?? Math.max(0, (usage.inputTokens ?? 0) - cacheRead - cacheWrite);
  return { input, output: usage.outputTokens ?? 0, cacheRead, cacheWrite };
}

/** The steps of a governed call: asked before it runs, its end recorded after, a failure's error with reins' words. */
interface CallSteps {
  ask: (tool: string, input: unknown, callId: string) => Promise<ReturnType<typeof toolTouch>>;
  end: (touch: ReturnType<typeof toolTouch>, outcome: ToolOutcome, callId: string) => Promise<void>;
  failed: (touch: ReturnType<typeof toolTouch>, error: unknown, callId: string) => Promise<unknown>;
}

/** A tool's `execute` (a function or an async generator) wrapped in the session's steps, of the same kind. */
function governedExecuteOf(
  tool: AnyTool,
  execute: NonNullable<AnyTool["execute"]>,
  name: string,
  { ask, end, failed }: CallSteps,
) {
  const run = (input: unknown, o: ToolExecutionOptions) => execute.call(tool, input, o);
  return isAsyncGeneratorFunction(execute)
    ? async function* (input: unknown, o: ToolExecutionOptions) {
        const touch = await ask(name, input, o.toolCallId);
        let last: unknown;
        try {
          for await (const part of run(input, o) as AsyncIterable<unknown>) yield (last = part);
        } catch (error) {
          throw await failed(touch, error, o.toolCallId);
        }
        await end(touch, outcomeOf(last), o.toolCallId);
      }
    : async (input: unknown, o: ToolExecutionOptions) => {
        const touch = await ask(name, input, o.toolCallId);
        let output: unknown;
        try {
          output = await run(input, o);
          // A plain function may return an iterable too: its last value is the result.
          if (isAsyncIterable(output)) output = await lastOf(output);
        } catch (error) {
          throw await failed(touch, error, o.toolCallId);
        }
        await end(touch, outcomeOf(output), o.toolCallId);
        return output;
      };
}

/**
 * Governs one agent session of the AI SDK with `governor`: pass `tools(...)`, `stopWhen` and `onStepFinish`
 * to `generateText` or `streamText`, and read `stop` after it returns.
 */
export function governSession(governor: Governor, options: GovernSessionOptions): GovernedSession {
  const scope = `session:${options.session}`;
  const like = options.like ?? {};
  const finalAnswer = options.finalAnswer ?? true;
  /** reins' words for the model, by the tool call whose result carries them. */
  const notes = new Map<string, string[]>();
  /** Words that came with no tool call (usage): they go with the next tool result. */
  let unsent: string[] = [];
  let started = false;
  let stop: ReinsStopAt | null = null;
  /** Whether the stop must end the loop now, and, when it waits for a final answer, the step it ends after. */
  let endNow = false;
  let lastStep: number | null = null;

  async function record(inputs: EventInput[]): Promise<NonNullable<Answer> | null> {
    const first: EventInput[] = started ? [] : [{ kind: "session.started", agent: AGENT }];
    started = true;
    const events = eventsAt(scope, Date.now(), [...first, ...inputs]);
    return worstAnswer((await governor.record(scope, events)).answers.slice(first.length));
  }

  /** Takes in an answer: keeps a stop, and returns what to tell the model (null for nothing). */
  function heed(answer: Answer, event: ReinsStopAt["event"]): string | null {
    if (answer === null || answer.verdict === "allow") return null;
    const reason = reasonOf(answer);
    if (answer.needsHuman) {
      stop ??= { ...reinsStop(scope, answer), event };
      if (event === "usage.recorded") endNow = true;
    }
    return reason;
  }

  const note = (callId: string, text: string) => notes.set(callId, [...(notes.get(callId) ?? []), text]);

  /** Records a call as asked for; throws ReinsDenied when reins denies it (or has stopped the session). */
  async function ask(tool: string, input: unknown, callId: string) {
    if (stop !== null) throw new ReinsDenied(stop.reason, stop.decision);
    const touch = { ...toolTouch(like[tool] ?? tool, input, callId), tool };
    const answer = await record([{ kind: "tool.requested", ...touch }]);
    const reason = heed(answer, "tool.requested");
    if (answer !== null && reason !== null) {
      if (answer.verdict === "block" || answer.needsHuman) throw new ReinsDenied(reason, answer);
      note(callId, reason);
    }
    return touch;
  }

  async function end(touch: ReturnType<typeof toolTouch>, outcome: ToolOutcome, callId: string) {
    const reason = heed(await record(toolEndEvents(touch, outcome, governor.policy)), "tool.completed");
    if (reason !== null) note(callId, reason);
  }

  /** A failed call's end recorded; the error to throw, with reins' words added when it has some. */
  async function failed(touch: ReturnType<typeof toolTouch>, error: unknown, callId: string) {
    await end(touch, failureOf(error), callId);
    const words = notes.get(callId);
    if (words === undefined) return error;
    return new Error([failureOf(error).text, ...words].join("\n\n"), { cause: error });
  }

  function governed(name: string, tool: AnyTool): AnyTool {
    const execute = tool.execute;
    if (execute === undefined) return tool;
    const governedExecute = governedExecuteOf(tool, execute, name, { ask, end, failed });
    const toModelOutput = tool.toModelOutput;
    return {
      ...tool,
      execute: governedExecute,
      // Called more than once for the same call (streamText converts a step twice): the same words each time.
      async toModelOutput(o) {
        const own = (
          toModelOutput === undefined ? defaultOutput(o.output) : await toModelOutput.call(tool, o)
        ) as ModelOutput;
        if (unsent.length > 0 && !notes.has(o.toolCallId)) {
          notes.set(o.toolCallId, unsent);
          unsent = [];
        }
        const words = notes.get(o.toolCallId);
        return words === undefined ? own : withNote(own, words.join("\n"));
      },
    };
  }

  return {
    scope,
    tools: <T extends ToolSet>(tools: T): T =>
      Object.fromEntries(
        Object.entries(tools).map(([name, tool]) => [name, governed(name, tool as AnyTool)]),
      ) as T,
    stopWhen({ steps }) {
      if (stop === null) return false;
      if (endNow || !finalAnswer) return true;
      lastStep ??= steps.length + 1;
      return steps.length >= lastStep;
    },
    async onStepFinish(step) {
      const id = step.response.id;
      const usage = { id, model: step.response.modelId, ...usageTokens(step.usage) };
      const reason = heed(await record([usageEvent(usage, governor.policy)]), "usage.recorded");
      if (reason !== null) unsent.push(reason);
    },
    get stop() {
      return stop;
    },
  };
}
