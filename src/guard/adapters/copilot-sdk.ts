/**
 * reins for the GitHub Copilot SDK (`@github/copilot-sdk`): a session's hooks from a governor, its usage read
 * from its `assistant.usage` events, and a stop that ends the session's turn.
 */
import type {
  AssistantMessageEvent,
  CopilotSession,
  SessionConfig,
  SessionEventPayload,
  SessionHooks,
} from "@github/copilot-sdk";
import type { Answer, Decision, EventInput, Policy } from "../../base/core/index.js";
import { eventsAt, usageEvent } from "../../base/vocabulary/events.js";
import type { Governor } from "../governor.js";
import { claude, type ClaudeInput } from "../hooks/claude.js";
import { reasonOf, worstAnswer } from "../../base/vocabulary/replies.js";
import type { UsageReader } from "../hooks/transcript.js";
import { reinsStop, ReinsStopped } from "./stop.js";
import type { SdkAgentName } from "./names.js";

/** How reins names the agent in a session's `session.started`. */
const AGENT: SdkAgentName = "copilot-sdk";

export { ReinsStopped, type ReinsStop } from "./stop.js";

export interface CopilotReinsOptions {
  /** Records the session's events and decides. */
  governor: Governor;
}

/** reins wired into one or more Copilot SDK sessions. Made by `copilotReins`. */
export interface CopilotReins {
  /** `config` (for `client.createSession`) with reins' hooks run after your own. */
  config<C extends SessionConfig>(config: C): C;
  /** Your hooks with reins' after them, for a config you build yourself. */
  hooks(base?: SessionHooks): SessionHooks;
  /**
   * `session.sendAndWait(prompt)` with each model call's usage recorded (from `assistant.usage`). When reins
   * stops the session (a spent budget, an open breaker) its turn is aborted, and this throws `ReinsStopped`
   * with the last assistant message as its `result`.
   */
  sendAndWait(
    session: CopilotSession,
    prompt: string,
    timeout?: number,
  ): Promise<AssistantMessageEvent | undefined>;
}

/** Usage comes from the session's events, never from a transcript. */
const noTranscripts: UsageReader = {
  read: () => [],
  readRollout: () => ({ usage: [], exitCode: () => undefined }),
};

const stopIn = (a: Answer | undefined): Decision | null =>
  a !== null && a !== undefined && a.verdict === "block" && a.needsHuman ? a : null;
const scopeOf = (sessionId: string) => `session:${sessionId}`;
const str = (v: unknown) => (typeof v === "string" ? v : "");

/** A Copilot tool result (`{ textResultForLlm, resultType, error? }`) as the text reins reads. */
function resultText(result: unknown): string {
  const r = (result ?? {}) as Record<string, unknown>;
  return typeof result === "string" ? result : str(r.textResultForLlm) || str(r.error);
}

/**
 * The Copilot SDK's hook inputs as the Claude Code hook input reins plans from: the same events under
 * Claude's names (`onPreToolUse` is PreToolUse, `onAgentStop` Stop, ...). Copilot's shell tool is `bash`; a
 * successful call is a command that exited 0, a failed one (`onPostToolUseFailure`) carries only its error.
 */
function asClaude(event: string, input: Record<string, unknown>, sessionId: string): ClaudeInput {
  const base = { session_id: sessionId, hook_event_name: event, cwd: str(input.workingDirectory) };
  const tool = { tool_name: str(input.toolName), tool_input: input.toolArgs ?? null };
  switch (event) {
    case "UserPromptSubmit":
      return { ...base, prompt: str(input.prompt) };
    case "PreToolUse":
      return { ...base, ...tool };
    case "PostToolUse": {
      // Copilot's bash tool reports a command's end in its text: `<shellId: N completed with exit code C>`,
      // a success for the SDK whatever C is. The shell's id changes on every call: the output is kept without it.
      const text = resultText(input.toolResult);
      const code = /<shellId: \d+ completed with exit code (-?\d+)>/.exec(text)?.[1];
      const stdout = text.replace(/<shellId: \d+ [^>]*>/g, "");
      const exit = code !== undefined ? { exit_code: Number(code) } : {};
      return { ...base, ...tool, tool_response: { stdout, ...exit } };
    }
    case "PostToolUseFailure": {
      const error = str(input.error);
      const code = /exit(?:ed with)? code:? (-?\d+)/i.exec(error)?.[1];
      return { ...base, ...tool, error: code !== undefined ? `Exit code ${code}\n${error}` : error };
    }
    default:
      return base;
  }
}

/** Claude Code's reply to a hook as the Copilot SDK's hook output: `hookSpecificOutput`'s fields at the top. */
function asCopilot(
  event: string,
  reply: Record<string, unknown> | null,
): Record<string, unknown> | undefined {
  if (reply === null) return undefined;
  const specific = (reply.hookSpecificOutput ?? {}) as Record<string, unknown>;
  const { hookEventName: _name, ...fields } = specific;
  if (event === "Stop")
    return reply.decision === "block" ? { decision: "block", reason: reply.reason } : undefined;
  // A PostToolUse block (the tool already ran) reaches the model as context, as the CLI adapters do.
  if (reply.decision === "block") return { additionalContext: reply.reason };
  return Object.keys(fields).length > 0 ? fields : undefined;
}

/** Your hooks with reins' after them: when yours decides (a deny, a block), reins is not asked. */
function mergeHooks(base: SessionHooks, ours: SessionHooks): SessionHooks {
  const merged: Record<string, unknown> = { ...base };
  for (const [name, hook] of Object.entries(ours) as [keyof SessionHooks, (...a: unknown[]) => unknown][]) {
    const theirs = base[name] as ((...a: unknown[]) => unknown) | undefined;
    // Yours first; when yours decides (a deny, a block), reins is not asked.
    merged[name] =
      theirs === undefined
        ? hook
        : async (...args: unknown[]) => {
            const own = (await theirs(...args)) as Record<string, unknown> | undefined;
            if (own?.permissionDecision === "deny" || own?.decision === "block") return own;
            const reins = (await hook(...args)) as Record<string, unknown> | undefined;
            return own === undefined ? reins : { ...own, ...reins };
          };
  }
  return merged;
}

/**
 * One model call's `assistant.usage` as reins' usage event, keyed by the event's id. The provider's input
 * count includes the tokens read from its cache (OpenAI's `prompt_tokens`, as the SDK passes it on): reins
 * counts those apart.
 */
function usageOf(event: SessionEventPayload<"assistant.usage">, policy: Policy): EventInput {
  const d = event.data;
  return usageEvent(
    {
      id: event.id,
      input: Math.max(0, (d.inputTokens ?? 0) - (d.cacheReadTokens ?? 0)),
      output: d.outputTokens ?? 0,
      cacheRead: d.cacheReadTokens ?? 0,
      cacheWrite: d.cacheWriteTokens ?? 0,
      ...(d.model !== undefined ? { model: d.model } : {}),
    },
    policy,
  );
}

/**
 * reins for Copilot SDK sessions. Each hook is answered as reins' Claude Code hook answers it (deny, ask,
 * note; an agent-stop's block keeps the agent going until the checks are green); a stop (a block with
 * `needsHuman`) denies the call and aborts the turn, and `sendAndWait` then throws `ReinsStopped`, as the
 * Claude Agent SDK adapter does. Each model call's usage is counted once, by its event id.
 */
export function copilotReins(options: CopilotReinsOptions): CopilotReins {
  const { governor } = options;
  const stops = new Map<string, Decision>();
  const started = new Set<string>();
  const sessions = new Map<string, CopilotSession>();

  async function answer(event: string, raw: unknown, sessionId: string) {
    const input = asClaude(event, (raw ?? {}) as Record<string, unknown>, sessionId);
    const scope = scopeOf(sessionId);
    if (event === "UserPromptSubmit") stops.delete(scope);
    const stopped = stops.get(scope);
    if (stopped !== undefined) {
      // The model read the stop's reason with its denied call and went on: its next hook ends the turn.
      void sessions
        .get(sessionId)
        ?.abort()
        .catch(() => undefined);
      return ended(event, stopped);
    }
    const plan = claude.plan(input, { policy: governor.policy, before: null, transcripts: noTranscripts });
    // The SDK may call onSessionStart after the first prompt's hook, which already opened the session.
    const opened = started.has(scope);
    const first: EventInput[] = opened ? [] : [{ kind: "session.started", agent: AGENT }];
    started.add(scope);
    const events = plan.events.filter((e) => e.kind !== "session.started");
    const recorded = await governor.record(scope, eventsAt(scope, Date.now(), [...first, ...events]));
    const answers = recorded.answers.slice(first.length);
    const decisive = (event === "Stop" ? answers[answers.length - 1] : worstAnswer(answers)) ?? null;
    const stop = stopIn(decisive);
    if (stop !== null) {
      stops.set(scope, stop);
      // A PreToolUse's stop reaches the model as its usual denial, so it can say in words where it is.
      if (event !== "PreToolUse") {
        void sessions
          .get(sessionId)
          ?.abort()
          .catch(() => undefined);
        return ended(event, stop);
      }
    }
    return asCopilot(event, plan.reply(answers, recorded.state) as Record<string, unknown> | null);
  }

  function ended(event: string, decision: Decision) {
    const reason = reasonOf(decision);
    if (event === "PreToolUse")
      return { permissionDecision: "deny" as const, permissionDecisionReason: reason };
    return undefined; // the turn is aborted; nothing else the hook says would be heard
  }

  const on =
    (event: string) =>
    (input: unknown, invocation: { sessionId: string }): Promise<never> =>
      answer(event, input, invocation.sessionId) as Promise<never>;
  const ours: SessionHooks = {
    onSessionStart: on("SessionStart"),
    onUserPromptSubmitted: on("UserPromptSubmit"),
    onPreToolUse: on("PreToolUse"),
    onPostToolUse: on("PostToolUse"),
    onPostToolUseFailure: on("PostToolUseFailure"),
    onAgentStop: on("Stop"),
  };

  const hooks = (base: SessionHooks = {}) => mergeHooks(base, ours);

  async function sendAndWait(session: CopilotSession, prompt: string, timeout?: number) {
    const scope = scopeOf(session.sessionId);
    sessions.set(session.sessionId, session);
    const pending: Promise<unknown>[] = [];
    const off = session.on("assistant.usage", (event) => {
      const usage = usageOf(event, governor.policy);
      pending.push(
        governor.record(scope, eventsAt(scope, Date.now(), [usage])).then((recorded) => {
          const stop = stopIn(recorded.answers[0]);
          if (stop === null) return;
          stops.set(scope, stop);
          return session.abort();
        }),
      );
    });
    let last: AssistantMessageEvent | undefined;
    try {
      last = await session.sendAndWait(prompt, timeout);
    } catch (error) {
      const decision = stops.get(scope);
      if (decision === undefined) throw error;
    } finally {
      off();
      await Promise.allSettled(pending);
    }
    const decision = stops.get(scope);
    if (decision !== undefined) throw new ReinsStopped(reinsStop(scope, decision), last);
    return last;
  }

  return {
    config: (config) => ({ ...config, hooks: hooks(config.hooks) }),
    hooks,
    sendAndWait,
  };
}
