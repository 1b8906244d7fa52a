/**
 * reins for the OpenAI Agents SDK (`@openai/agents`): guardrails for an agent's function tools and a wrapper
 * for its model, both recording into one session of a governor. The SDK is only a type here: importing this
 * module loads nothing of it.
 */
import { randomUUID } from "node:crypto";
import type {
  FunctionCallItem,
  FunctionTool,
  Model,
  ModelProvider,
  ModelRetryAdvice,
  ModelRetryAdviceRequest,
  Tool,
  ToolGuardrailFunctionOutput,
  ToolInputGuardrailDefinition,
  ToolOutputGuardrailDefinition,
} from "@openai/agents";
import type { Decision, EventInput } from "../../base/core/index.js";
import {
  canonical,
  eventsAt,
  toolEndEvents,
  toolTouch,
  usageEvent,
  type ToolOutcome,
} from "../../base/vocabulary/events.js";
import type { Governor } from "../governor.js";
import { verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { openAiUsage, type SdkUsage } from "./openai-agents-usage.js";
import { reinsStopOf } from "./openai-agents-stop.js";
import { reinsStop, ReinsStopped, type ReinsStop } from "./stop.js";
import type { SdkAgentName } from "./names.js";

export { reinsStopOf } from "./openai-agents-stop.js";
export { ReinsStopped, type ReinsStop } from "./stop.js";

/** How reins names the agent in a session's `session.started`. */
const AGENT: SdkAgentName = "openai-agents";

/** The name of reins' guardrails, as the SDK lists them in a run's guardrail results. */
const GUARDRAIL = "reins";

/** The text the SDK's default error function gives the model for a tool that threw. */
const SDK_ERROR = "An error occurred while running the tool.";

const ALLOW: ToolGuardrailFunctionOutput = { behavior: { type: "allow" } };

export interface GovernAgentsOptions {
  /** The session's id: its events go to the scope `session:<id>`. */
  session: string;
  /**
   * How a call ended, from what the tool returned. @default failed when the output is the SDK's message for a
   * tool that threw (`An error occurred while running the tool...`) or timed out
   */
  outcome?: (output: unknown, tool: string) => ToolOutcome;
}

/** reins in one session of an agent: what to give the SDK, and whether reins has stopped the session. */
export interface GovernedAgents {
  /** `session:<id>`, the scope of every event. */
  readonly scope: string;
  /** Why reins stopped the session, once it has; the session then runs no tool and calls no model. */
  readonly stopped: ReinsStop | null;
  /**
   * Copies of `tools` with reins' guardrails after their own: every function tool call is recorded before it
   * runs (a denied call does not run: the model reads reins' reason instead of the tool's output) and after.
   * Other tools (hosted, computer, shell, apply-patch) are returned as they are: the SDK has no guardrails
   * for them.
   */
  tools<T extends Tool<C>, C = unknown>(tools: readonly T[]): T[];
  /**
   * The model, recording each response's usage as it arrives; a stop (a spent budget) ends the run with a
   * `ReinsStopped` instead of the response. `name` prices the usage when the response does not say.
   */
  model(model: Model, name?: string): Model;
  /** A provider whose every model is wrapped as `model` wraps one. */
  provider(provider: ModelProvider): ModelProvider;
}

/**
 * reins for one session of an OpenAI Agents SDK agent, recording through `governor`. A denied tool call is
 * rejected with reins' reason (the model reads it as the call's output); a stop (`block` that needs a person)
 * ends the run: `run()` rejects, and `reinsStopOf(error)` finds reins' reason in what it threw. Advice
 * (`warn`) reaches the model after the next tool's output.
 */
export function governAgents(governor: Governor, options: GovernAgentsOptions): GovernedAgents {
  const session = new AgentsSession(governor, options);
  return {
    scope: session.scope,
    get stopped() {
      return session.stopped;
    },
    tools: (tools) =>
      tools.map((tool) => (tool.type === "function" ? (guarded(session, tool) as typeof tool) : tool)),
    model: (inner, name) => governedModel(session, inner, name),
    provider: (inner) => ({
      getModel: async (name) => governedModel(session, await inner.getModel(name), name),
    }),
  };
}

/** One session's state: its stop once there is one, its start recorded once, advice not yet given. */
class AgentsSession {
  readonly scope: string;
  stopped: ReinsStop | null = null;
  private started: Promise<unknown> | undefined;
  /** reins' advice not yet given to the model: it follows the next tool output or denial. */
  readonly pending: string[] = [];
  private readonly outcomeOf: (output: unknown, tool: string) => ToolOutcome;

  constructor(
    private readonly governor: Governor,
    options: GovernAgentsOptions,
  ) {
    this.scope = `session:${options.session}`;
    this.outcomeOf = options.outcome ?? sdkOutcome;
  }

  private async record(inputs: readonly EventInput[]): Promise<Decision | null> {
    const { governor, scope } = this;
    this.started ??= governor.record(
      scope,
      eventsAt(scope, Date.now(), [{ kind: "session.started", agent: AGENT }]),
    );
    await this.started;
    return worstAnswer((await governor.record(scope, eventsAt(scope, Date.now(), inputs))).answers);
  }

  /** The session's stop when `answer` is one (a block that needs a person): the session ends there. */
  private stopOf(answer: Decision | null): ReinsStop | null {
    if (answer === null || answer.verdict !== "block" || !answer.needsHuman) return null;
    this.stopped ??= reinsStop(this.scope, answer);
    return this.stopped;
  }

  /**
   * An answer to something already done (a call that ran, a model response): a stop, or else whatever reins
   * says is kept for the model. A confirmation asked for there has no form in the SDK: the model is told.
   */
  private afterwards(answer: Decision | null): ReinsStop | null {
    const stop = this.stopOf(answer);
    const verdict = verdictOf(answer);
    if (stop === null && verdict !== null) this.pending.push(verdict.reason);
    return stop;
  }

  withPending(text: string): string {
    return [text, ...this.pending.splice(0)].join("\n\n");
  }

  async requested(call: FunctionCallItem): Promise<ToolGuardrailFunctionOutput> {
    if (this.stopped !== null) return tripwire(this.stopped);
    const answer = await this.record([{ kind: "tool.requested", ...touchOf(call) }]);
    const stop = this.stopOf(answer);
    if (stop !== null) return tripwire(stop);
    const verdict = verdictOf(answer);
    if (verdict === null) return ALLOW;
    if (verdict.form === "note") {
      this.pending.push(verdict.reason);
      return ALLOW;
    }
    // A person's confirmation has no form in a tool call: it is denied, as by any agent without one.
    return {
      behavior: { type: "rejectContent", message: this.withPending(verdict.reason) },
      outputInfo: answer,
    };
  }

  async completed(call: FunctionCallItem, output: unknown): Promise<ToolGuardrailFunctionOutput> {
    const events = toolEndEvents(touchOf(call), this.outcomeOf(output, call.name), this.governor.policy);
    const stop = this.afterwards(await this.record(events));
    return stop === null ? ALLOW : tripwire(stop);
  }

  async charge(usage: SdkUsage, id: string | undefined, model: string | undefined): Promise<void> {
    // A response that reports no tokens (a provider without usage) has nothing to charge.
    if (usage.inputTokens + usage.outputTokens === 0) return;
    const priced = usageEvent(openAiUsage(id ?? randomUUID(), usage, model), this.governor.policy);
    const stop = this.afterwards(await this.record([priced]));
    if (stop !== null) throw new ReinsStopped(stop);
  }

  refuseWhenStopped(): void {
    if (this.stopped !== null) throw new ReinsStopped(this.stopped);
  }
}

const tripwire = (stop: ReinsStop): ToolGuardrailFunctionOutput => ({
  behavior: { type: "throwException" },
  outputInfo: stop,
});

/** A copy of `tool` with reins' guardrails after its own. */
function guarded<C>(session: AgentsSession, tool: FunctionTool<C>): FunctionTool<C> {
  const request: ToolInputGuardrailDefinition<C> = {
    type: "tool_input",
    name: GUARDRAIL,
    run: ({ toolCall }) => session.requested(toolCall),
  };
  // Two output guardrails: the first records every call the tool ran (a guardrail that changes the
  // output ends the list); the last gives the model reins' advice, unless the tool's output has a schema.
  const end: ToolOutputGuardrailDefinition<C> = {
    type: "tool_output",
    name: GUARDRAIL,
    run: ({ toolCall, output }) => session.completed(toolCall, output),
  };
  const advise: ToolOutputGuardrailDefinition<C> = {
    type: "tool_output",
    name: GUARDRAIL,
    run: ({ output }) =>
      Promise.resolve<ToolGuardrailFunctionOutput>(
        session.pending.length === 0 || tool.outputSchema !== undefined
          ? ALLOW
          : { behavior: { type: "rejectContent", message: session.withPending(textOf(output)) } },
      ),
  };
  return copyWith(tool, {
    inputGuardrails: [...(tool.inputGuardrails ?? []), request],
    outputGuardrails: [end, ...(tool.outputGuardrails ?? []), advise],
  });
}

/** `inner`, recording each response's usage as it arrives; a stop ends the run instead of the response. */
function governedModel(session: AgentsSession, inner: Model, name?: string): Model {
  return {
    async getResponse(request) {
      session.refuseWhenStopped();
      const response = await inner.getResponse(request);
      const id = response.responseId ?? response.requestId;
      await session.charge(response.usage, id, modelOf(response.providerData) ?? name);
      return response;
    },
    async *getStreamedResponse(request) {
      session.refuseWhenStopped();
      for await (const event of inner.getStreamedResponse(request)) {
        if (event.type === "response_done") {
          const { usage, id, providerData } = event.response;
          await session.charge(usage, id, modelOf(providerData) ?? name);
        }
        yield event;
      }
    },
    getRetryAdvice(args: ModelRetryAdviceRequest): Promise<ModelRetryAdvice | undefined> {
      // A stop is not a failure to retry: the runner's own policy could otherwise call the model again.
      if (reinsStopOf(args.error) !== null)
        return Promise.resolve({
          suggested: false,
          replaySafety: "unsafe",
          reason: "reins stopped the run",
        });
      return Promise.resolve(inner.getRetryAdvice?.(args));
    },
  };
}

/** What a function call touches, as reins names it: its input is the JSON of its arguments. */
function touchOf(call: FunctionCallItem) {
  let input: unknown = call.arguments;
  try {
    input = JSON.parse(call.arguments);
  } catch {
    // Arguments that are not JSON are hashed as the text they are.
  }
  return toolTouch(call.name, input, call.callId);
}

function textOf(output: unknown): string {
  return typeof output === "string" ? output : canonical(output ?? null);
}

/** A call's end as the SDK reports it: a tool that threw or timed out gives the model the SDK's message. */
function sdkOutcome(output: unknown): ToolOutcome {
  const text = textOf(output);
  const failed = text.startsWith(SDK_ERROR) || /^Tool '[^']*' timed out after \d+ms\.$/.test(text);
  return { failed, text, output };
}

/** The model a response names (the Responses API's `model`), if it does. */
function modelOf(providerData: Record<string, unknown> | undefined): string | undefined {
  const model = providerData?.model;
  return typeof model === "string" && model !== "" ? model : undefined;
}

/** A copy of `tool` with `fields` replaced, its prototype, getters and symbol-keyed fields kept (as the SDK copies tools). */
function copyWith<T extends object>(tool: T, fields: Partial<T>): T {
  const copy: unknown = Object.create(
    Object.getPrototypeOf(tool) as object | null,
    Object.getOwnPropertyDescriptors(tool),
  );
  return Object.assign(copy as T, fields);
}
