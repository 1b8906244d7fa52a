/** Claude Code's hook protocol: its input, how a tool call ended, and the replies in its forms. */
import * as z from "zod";
import type { AgentAdapter, AgentName, HookContext, HookPlan } from "./agent-adapter.js";
import { canonical } from "../../base/vocabulary/hash.js";
import {
  claimEvent,
  promptTaskEvents,
  toolEndEvents,
  type ToolOutcome,
} from "../../base/vocabulary/event-builders.js";
import { contextReply, verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { sessionIdSchema } from "./session-id.js";
import { toolTouch } from "../../base/vocabulary/tool-touch.js";
import { statusReply } from "./status-line.js";

/**
 * The fields of Claude Code's hook input that reins reads; everything else is ignored. Built on first use: a
 * hook process parses only one agent's input.
 */
export const claudeInput = z.lazy(() =>
  z
    .object({
      session_id: sessionIdSchema(),
      hook_event_name: z.string().min(1).max(64),
      transcript_path: z.string().max(4096).optional(),
      cwd: z.string().max(4096).optional(),
      prompt_id: z.string().max(256).optional(),
      tool_name: z.string().max(256).optional(),
      tool_input: z.unknown().optional(),
      tool_response: z.unknown().optional(),
      tool_use_id: z.string().max(256).optional(),
      error: z.unknown().optional(),
      stop_hook_active: z.boolean().optional(),
      last_assistant_message: z.unknown().optional(),
      prompt: z.string().optional(),
    })
    .loose(),
);

export type ClaudeInput = z.infer<typeof claudeInput>;

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/**
 * How a Claude Code tool call ended. PostToolUse is a success (a Bash command that exits non-zero comes as
 * PostToolUseFailure, its error text starting `Exit code N`); a tool's own `is_error` or an interrupt is a
 * failure too. A successful Bash call exited 0.
 */
function claudeOutcome(input: ClaudeInput): ToolOutcome {
  if (input.hook_event_name === "PostToolUseFailure") {
    const text = str(input.error) ?? canonical(input.error ?? input.tool_response ?? "");
    const code = /^Exit code (-?\d+)/.exec(text);
    return {
      failed: true,
      text,
      output: input.error ?? null,
      ...(code !== null ? { exitCode: Number(code[1]) } : {}),
    };
  }
  const response = input.tool_response;
  const r = (response ?? {}) as Record<string, unknown>;
  const reported =
    typeof r.exit_code === "number" ? r.exit_code : typeof r.exitCode === "number" ? r.exitCode : undefined;
  const failed = r.is_error === true || r.interrupted === true || (reported !== undefined && reported !== 0);
  const text = typeof response === "string" ? response : `${str(r.stdout) ?? ""}${str(r.stderr) ?? ""}`;
  const exitCode = reported ?? (input.tool_name === "Bash" && !failed ? 0 : undefined);
  return { failed, text, output: response ?? null, ...(exitCode !== undefined ? { exitCode } : {}) };
}

/**
 * Turns one Claude Code hook call into reins events and a reply in Claude Code's protocol
 * (docs/architecture.md, "Agent CLI integration").
 */
export function planClaude(input: ClaudeInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.session_id}`;
  const task =
    input.prompt_id !== undefined && input.prompt_id !== "" ? `prompt-${input.prompt_id}` : undefined;
  // A turn's start also takes the tool calls its lines say finished (`calls`), for the tamper check.
  const usage = (options?: { calls: boolean }) =>
    ctx.transcripts.read(input.session_id, input.transcript_path, ctx.policy, options);
  const tool = input.tool_name ?? "unknown";
  const touch = () => toolTouch(tool, input.tool_input, input.tool_use_id);
  const none = () => null;

  switch (input.hook_event_name) {
    case "SessionStart":
      return {
        scope,
        // A resumed session's lines since the last reading: their usage, and calls no hook answered.
        events: [{ kind: "session.started", agent: "claude" satisfies AgentName }, ...usage({ calls: true })],
        reply: statusReply("SessionStart", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "SessionEnd":
      return { scope, turn: "close", events: [...usage(), { kind: "session.ended" }], reply: none };
    case "UserPromptSubmit":
      return {
        scope,
        // A prompt sent again under the id of the task in flight (scripted sessions reuse one) starts it anew.
        events: [
          ...usage({ calls: true }),
          ...promptTaskEvents(ctx.before, task, "prompt-", { sameTask: "restart" }),
        ],
        reply: statusReply("UserPromptSubmit", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "PreToolUse":
      return {
        scope,
        events: [{ kind: "tool.requested", ...(task !== undefined ? { task } : {}), ...touch() }],
        reply: (answers) => {
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
        },
      };
    case "PostToolUse":
    case "PostToolUseFailure": {
      const events = toolEndEvents(touch(), claudeOutcome(input), ctx.policy, task);
      return {
        scope,
        events: [...events, ...usage()],
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          if (verdict === null) return null;
          if (verdict.form === "deny") return { decision: "block", reason: verdict.reason };
          return contextReply(input.hook_event_name, verdict.reason);
        },
      };
    }
    case "Stop":
    case "SubagentStop":
      return {
        scope,
        turn: "close",
        events: [...usage(), claimEvent(ctx.policy, input.last_assistant_message, task)],
        reply: (answers) => {
          // The claim's own answer decides, not an earlier event's.
          const verdict = verdictOf(answers[answers.length - 1], ctx.notices);
          if (verdict === null) return null;
          if (verdict.form === "deny") return { decision: "block", reason: verdict.reason };
          return { systemMessage: verdict.reason };
        },
      };
    default:
      return { scope, events: [], reply: none };
  }
}

/** Claude Code's hook protocol. */
export const claude: AgentAdapter<ClaudeInput> = {
  name: "claude",
  input: claudeInput,
  session: (input) => input.session_id,
  cwd: (input) => input.cwd,
  projectEnv: ["CLAUDE_PROJECT_DIR"],
  needsState: (input) => input.hook_event_name === "UserPromptSubmit",
  plan: planClaude,
};
