/** Qwen Code's hook protocol: its input, how a tool call ended, its transcript's usage, and the replies. */
import * as z from "zod";
import type { AgentAdapter, AgentName, HookContext, HookPlan } from "./agent-adapter.js";
import { geminiOutcome } from "./gemini.js";
import { canonical } from "../../base/vocabulary/hash.js";
import { claimEvent, toolEndEvents, type ToolOutcome } from "../../base/vocabulary/event-builders.js";
import { contextReply, verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { sessionIdSchema } from "./session-id.js";
import { toolTouch } from "../../base/vocabulary/tool-touch.js";
import { statusReply } from "./status-line.js";

/**
 * Qwen Code (0.15, a Gemini CLI fork) reads Claude Code-style hooks from `.qwen/settings.json` (command
 * timeouts in milliseconds), with Claude's event names and replies: `hookSpecificOutput.permissionDecision`,
 * `decision: "block"` + `reason`, `additionalContext`. What it was seen to do headless (`qwen -p`, checked
 * against the real CLI in test/qwen-e2e.test.ts): no SessionStart or SessionEnd; UserPromptSubmit for the
 * prompt, again with an empty prompt before every model call that follows a tool round, and with a Stop
 * hook's reason as the prompt when the Stop was blocked; PostToolUse for a shell command whatever its exit
 * code, its result `{ llmContent, returnDisplay }` ending in `Exit Code: N` and `Signal: 0`; `stop_hook_active`
 * true on every Stop. Hook inputs carry no tokens: they are in the session's transcript (`transcript_path`,
 * a JSONL file with a Gemini-style `usageMetadata` on each model reply line), read since the last call.
 */

/**
 * The fields of Qwen Code's hook input that reins reads; everything else is ignored. Built on first use: a
 * hook process parses only one agent's input.
 */
export const qwenInput = z.lazy(() =>
  z
    .object({
      session_id: sessionIdSchema(),
      hook_event_name: z.string().min(1).max(64),
      transcript_path: z.string().max(4096).optional(),
      cwd: z.string().max(4096).optional(),
      tool_name: z.string().max(256).optional(),
      tool_input: z.unknown().optional(),
      tool_response: z.unknown().optional(),
      tool_use_id: z.string().max(256).optional(),
      error: z.unknown().optional(),
      last_assistant_message: z.unknown().optional(),
      prompt: z.string().optional(),
      reason: z.string().max(256).optional(),
    })
    .loose(),
);

export type QwenInput = z.infer<typeof qwenInput>;

const record = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});

/**
 * How a Qwen Code tool call ended: a PostToolUseFailure is a failure (its `error` the text); a PostToolUse
 * result reads as Gemini CLI's, except that Qwen prints `Signal: 0` for a command no signal ended.
 */
export function qwenOutcome(input: QwenInput): ToolOutcome {
  if (input.hook_event_name === "PostToolUseFailure") {
    const text = typeof input.error === "string" ? input.error : canonical(input.error ?? "");
    return { failed: true, text, output: input.error ?? null };
  }
  const response = record(input.tool_response);
  const content = response.llmContent;
  const fixed =
    typeof content === "string"
      ? { ...response, llmContent: content.replace(/^Signal: 0$/gm, "") }
      : response;
  return geminiOutcome(fixed);
}

/** The reply to a PreToolUse: Claude Code's form, which Qwen Code honours (an `ask` blocks headless). */
function preToolReply(ctx: HookContext): HookPlan["reply"] {
  return (answers) => {
    const verdict = verdictOf(worstAnswer(answers), ctx.notices);
    if (verdict === null) return null;
    if (verdict.form === "note") return contextReply("PreToolUse", verdict.reason);
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: verdict.form,
        permissionDecisionReason: verdict.reason,
      },
    };
  };
}

/**
 * A UserPromptSubmit. The first of a session opens it (headless Qwen Code fires no SessionStart), and each
 * prompt of the person (or a Stop's reason, sent as one) gets the status line; the empty one before each
 * model call after a tool round only brings the transcript's usage in.
 */
function planPrompt(input: QwenInput, ctx: HookContext, scope: string): HookPlan {
  const usage = ctx.transcripts.read(input.session_id, input.transcript_path, ctx.policy);
  const start =
    ctx.before === null ? [{ kind: "session.started" as const, agent: "qwen" satisfies AgentName }] : [];
  if ((input.prompt ?? "") === "" && start.length === 0) return { scope, events: usage, reply: () => null };
  return {
    scope,
    events: [...start, ...usage],
    reply: statusReply("UserPromptSubmit", ctx.policy, ctx.notices),
    turn: "open",
  };
}

/** Turns one Qwen Code hook call into reins events and a reply in its protocol. */
export function planQwen(input: QwenInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.session_id}`;
  const usage = () => ctx.transcripts.read(input.session_id, input.transcript_path, ctx.policy);
  const tool = input.tool_name ?? "unknown";
  const touch = () => toolTouch(tool, input.tool_input, input.tool_use_id);

  switch (input.hook_event_name) {
    case "SessionStart":
      return {
        scope,
        events: [{ kind: "session.started", agent: "qwen" satisfies AgentName }],
        reply: statusReply("SessionStart", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "SessionEnd":
      return {
        scope,
        turn: "close",
        events: [
          ...usage(),
          { kind: "session.ended", ...(input.reason !== undefined ? { reason: input.reason } : {}) },
        ],
        reply: () => null,
      };
    case "UserPromptSubmit":
      return planPrompt(input, ctx, scope);
    case "PreToolUse":
      return { scope, events: [{ kind: "tool.requested", ...touch() }], reply: preToolReply(ctx) };
    case "PostToolUse":
    case "PostToolUseFailure":
      return {
        scope,
        events: [...toolEndEvents(touch(), qwenOutcome(input), ctx.policy), ...usage()],
        // The tool ran: a block takes effect at the next PreToolUse, so both blocks and warnings are context.
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          return verdict === null ? null : contextReply(input.hook_event_name, verdict.reason);
        },
      };
    case "Stop":
    case "SubagentStop":
      return {
        scope,
        turn: "close",
        events: [...usage(), claimEvent(ctx.policy, input.last_assistant_message)],
        reply: (answers) => {
          // The claim's own answer decides; a block sends its reason to the model as the next prompt.
          const verdict = verdictOf(answers[answers.length - 1], ctx.notices);
          if (verdict === null) return null;
          if (verdict.form === "deny") return { decision: "block", reason: verdict.reason };
          return { systemMessage: verdict.reason };
        },
      };
    default:
      return { scope, events: [], reply: () => null };
  }
}

/** Qwen Code's hook protocol. */
export const qwen: AgentAdapter<QwenInput> = {
  name: "qwen",
  input: qwenInput,
  session: (input) => input.session_id,
  cwd: (input) => input.cwd,
  // Qwen Code (0.15) sets all three to the project's folder; its own first.
  projectEnv: ["QWEN_PROJECT_DIR"],
  needsState: (input) => input.hook_event_name === "UserPromptSubmit",
  // Qwen Code queues the reply's transcript line and fires Stop at once; under load the hook comes first. A
  // reply with text always has its line (one with neither text nor usage has none, and no wait).
  owedReplyLine: (input) =>
    input.hook_event_name === "Stop" &&
    typeof input.last_assistant_message === "string" &&
    input.last_assistant_message !== ""
      ? input.transcript_path
      : undefined,
  plan: planQwen,
};
