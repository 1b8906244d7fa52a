/**
 * reins for the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`): a query's hooks and permission
 * callback from a governor, its usage read from the message stream, and a stop that ends the query.
 */
import type {
  CanUseTool,
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  Options,
  PreToolUseHookSpecificOutput,
  Query,
  SDKMessage,
  SDKPartialAssistantMessage,
  SDKResultMessage,
  SyncHookJSONOutput,
} from "@anthropic-ai/claude-agent-sdk";
import type { Answer, Decision, EventInput } from "../../base/core/index.js";
import { eventsAt, usageEvent } from "../../base/vocabulary/events.js";
import type { Governor } from "../governor.js";
import { claude, type ClaudeInput } from "../hooks/claude.js";
import { reasonOf, verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import type { UsageReader } from "../hooks/transcript.js";
import { reinsStop, ReinsStopped } from "./stop.js";
import { hookEventsOf } from "../hooks/hook-events.js";
import type { SdkAgentName } from "./names.js";

/** How reins names the agent in a session's `session.started`. */
const AGENT: SdkAgentName = "claude-agent-sdk";

export { ReinsStopped, type ReinsStop } from "./stop.js";

export interface ClaudeAgentReinsOptions {
  /** Records the session's events and decides. */
  governor: Governor;
  /**
   * Asked when reins or Claude Code wants a person to confirm a tool call; a `canUseTool` in the options
   * given to `options()` takes its place. @default none: such a call is denied, saying a person must confirm
   */
  canUseTool?: CanUseTool;
}

/** reins wired into one or more Claude Agent SDK queries. Made by `claudeAgentReins`. */
export interface ClaudeAgentReins {
  /**
   * `options` with reins' hooks added after your own, reins' `canUseTool` (which asks yours when a person
   * must confirm) and `includePartialMessages` on, since usage is read from the stream's events.
   */
  options(options?: Options): Options;
  /**
   * The query's messages, `stream_event`s included, with each model call's usage recorded. When reins stops
   * the session its turn ends (a call past the budget interrupts it), and after the turn's `result` message
   * this throws `ReinsStopped`.
   */
  governed(query: Query): AsyncGenerator<SDKMessage, void>;
}

/** The hook events reins answers: those `reins init claude` installs for the CLI. */
const HOOKED = hookEventsOf("claude") as readonly HookEvent[];

/**
 * The tool hooks: their replies reach the model (a denial, a note) without keeping the agent from stopping.
 */
const TOOL_HOOKS = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);

/** Usage comes from the message stream, never from the transcript (a query need not write one). */
const noTranscripts: UsageReader = {
  read: () => [],
  readRollout: () => ({ usage: [], exitCode: () => undefined }),
};

/** The answer when it is a stop (a block a person must act on), else null. */
const stopIn = (a: Answer | undefined): Decision | null =>
  a !== null && a !== undefined && a.verdict === "block" && a.needsHuman ? a : null;
const scopeOf = (sessionId: string) => `session:${sessionId}`;

/** A model call whose stream has started: its id, model and usage so far. */
interface OpenCall {
  id: string;
  model: string;
  input: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * reins for Claude Agent SDK queries. The SDK's hooks are Claude Code's, so they are answered as reins'
 * Claude Code hook answers them (deny, ask, note; a Stop hook's block keeps the agent going); a stop (block
 * with `needsHuman`) also ends the turn (`continue: false`). Each model call's usage is counted once, from
 * its stream events (`message_start` and `message_delta`): the assistant messages' usage is not final.
 */
export function claudeAgentReins(options: ClaudeAgentReinsOptions): ClaudeAgentReins {
  const sessions = new SdkSessions(options.governor);
  const hook: HookCallback = (raw) => sessions.answer(raw);
  return {
    options(base: Options = {}): Options {
      const hooks: Partial<Record<HookEvent, HookCallbackMatcher[]>> = { ...base.hooks };
      for (const event of HOOKED) hooks[event] = [...(base.hooks?.[event] ?? []), { hooks: [hook] }];
      return {
        ...base,
        hooks,
        canUseTool: permission(base.canUseTool ?? options.canUseTool),
        includePartialMessages: true,
      };
    },
    governed: (query) => governed(sessions, query),
  };
}

/** What the queries' hooks and streams share, by scope: their stops, which started, notes not yet given. */
class SdkSessions {
  readonly stops = new Map<string, Decision>();
  /** Sessions whose start this adapter recorded: the SDK calls no SessionStart hook, so the first prompt does. */
  private readonly started = new Set<string>();
  private readonly notes = new Map<string, string[]>();

  constructor(private readonly governor: Governor) {}

  /** Answers one hook call as reins' Claude Code hook does. */
  async answer(raw: unknown): Promise<SyncHookJSONOutput> {
    const { governor, stops, started } = this;
    const parsed = claude.input.safeParse(raw);
    if (!parsed.success) return {};
    const input: ClaudeInput = parsed.data;
    const event = input.hook_event_name;
    const scope = scopeOf(claude.session(input));
    // A new prompt starts afresh (it comes before the query's first message); the guards still stop it
    // while the budget is paused or the breaker open.
    if (event === "UserPromptSubmit") stops.delete(scope);
    const stopped = stops.get(scope);
    if (stopped !== undefined) return ended(event, stopped);
    // The state before the call only closes the previous prompt's task: without the store, there is none.
    const before = claude.needsState(input) ? await governor.store.state(scope).catch(() => null) : null;
    const plan = claude.plan(input, { policy: governor.policy, before, transcripts: noTranscripts });
    const first: EventInput[] =
      event === "SessionStart" || started.has(plan.scope) ? [] : [{ kind: "session.started", agent: AGENT }];
    started.add(plan.scope);
    const recorded = await governor.record(
      plan.scope,
      eventsAt(plan.scope, Date.now(), [...first, ...plan.events]),
    );
    const { state } = recorded;
    const answers = recorded.answers.slice(first.length);
    const claim = event === "Stop" || event === "SubagentStop";
    const decisive = (claim ? answers[answers.length - 1] : worstAnswer(answers)) ?? null;
    const stop = stopIn(decisive);
    if (stop !== null) {
      stops.set(scope, stop);
      // A tool hook's stop reaches the model as its usual denial, so it can say in words where it is
      // (an open breaker asks it to); its next tool call, or its stop, ends the loop.
      if (!TOOL_HOOKS.has(event)) return ended(event, stop);
    }
    // Claude Code's hook protocol, which the SDK's hook callbacks answer in as well.
    const reply = (plan.reply(answers, state) ?? {}) as SyncHookJSONOutput;
    return this.withNotes(scope, event, reply);
  }

  /** A reply with the scope's waiting notes added as context for the model, when the hook can carry them. */
  private withNotes(scope: string, event: string, reply: SyncHookJSONOutput): SyncHookJSONOutput {
    const waiting = this.notes.get(scope);
    if (waiting === undefined || !TOOL_HOOKS.has(event)) return reply;
    this.notes.delete(scope);
    // Every tool hook's specific output has `additionalContext`.
    const specific = (reply.hookSpecificOutput ?? { hookEventName: event }) as PreToolUseHookSpecificOutput;
    const additionalContext = [specific.additionalContext, ...waiting]
      .filter((t) => t !== undefined)
      .join("\n");
    return { ...reply, hookSpecificOutput: { ...specific, additionalContext } };
  }

  /** Records a model call's usage once its stream says it is final; a stop interrupts the query. */
  async recordUsage(query: Query, message: SDKPartialAssistantMessage, open: Map<string, OpenCall>) {
    const { event } = message;
    const key = message.parent_tool_use_id ?? "";
    if (event.type === "message_start") {
      const { id, model, usage } = event.message;
      open.set(key, {
        id,
        model,
        input: usage.input_tokens,
        cacheRead: usage.cache_read_input_tokens ?? 0,
        cacheWrite: usage.cache_creation_input_tokens ?? 0,
      });
      return;
    }
    if (event.type !== "message_delta") return;
    const call = open.get(key);
    if (call === undefined) return;
    open.delete(key);
    // The delta's counts are cumulative for the call; where it leaves one out, message_start's stands.
    const { usage } = event;
    const scope = scopeOf(message.session_id);
    const recorded = await this.governor.record(
      scope,
      eventsAt(scope, Date.now(), [
        usageEvent(
          {
            id: call.id,
            model: call.model,
            input: usage.input_tokens ?? call.input,
            output: usage.output_tokens,
            cacheRead: usage.cache_read_input_tokens ?? call.cacheRead,
            cacheWrite: usage.cache_creation_input_tokens ?? call.cacheWrite,
          },
          this.governor.policy,
        ),
      ]),
    );
    const answer = recorded.answers[0];
    const stop = stopIn(answer);
    const verdict = verdictOf(answer);
    if (stop !== null) {
      this.stops.set(scope, stop);
      // Ends the turn (its result message follows); a query that cannot be interrupted is closed.
      query.interrupt().catch(() => query.close());
    } else if (verdict !== null) this.notes.set(scope, [...(this.notes.get(scope) ?? []), verdict.reason]);
  }
}

function ended(event: string, decision: Decision): SyncHookJSONOutput {
  const reason = reasonOf(decision);
  if (event !== "PreToolUse") return { continue: false, stopReason: reason };
  return {
    continue: false,
    stopReason: reason,
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
  };
}

function permission(delegate: CanUseTool | undefined): CanUseTool {
  return async (toolName, input, context) => {
    if (delegate !== undefined) return delegate(toolName, input, context);
    // A PreToolUse `ask` comes here with reins' reason as the decision's; Claude Code's own asks with theirs.
    const why = context.decisionReason ?? `Claude Code asks before this ${toolName} call.`;
    return { behavior: "deny", message: `${why} A person must confirm this call, and none was asked.` };
  };
}

/** The query's messages with each model call's usage recorded; a stop ends it with `ReinsStopped`. */
async function* governed(sessions: SdkSessions, query: Query): AsyncGenerator<SDKMessage, void> {
  const open = new Map<string, OpenCall>();
  let session: string | undefined;
  let result: SDKResultMessage | undefined;
  const stopped = () => (session === undefined ? undefined : sessions.stops.get(scopeOf(session)));
  const stop = (decision: Decision) => {
    query.close();
    return new ReinsStopped(reinsStop(scopeOf(session ?? ""), decision), result);
  };
  try {
    for await (const message of query) {
      if ("session_id" in message && typeof message.session_id === "string") session = message.session_id;
      if (message.type === "stream_event") await sessions.recordUsage(query, message, open);
      if (message.type === "result") result = message;
      yield message;
      const decision = stopped();
      if (decision !== undefined && message.type === "result") throw stop(decision);
    }
  } catch (error) {
    const decision = stopped();
    // After an interrupt the SDK throws for the turn's error result: the stop is the reason.
    if (ReinsStopped.is(error) || decision === undefined) throw error;
    throw stop(decision);
  }
  const decision = stopped();
  if (decision !== undefined) throw stop(decision);
}
