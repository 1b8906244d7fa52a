import * as z from "zod";
import type { Answer } from "../core/batch.js";
import type { EventInput } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import { scopeSummary } from "../core/summary.js";
import { formatCount, formatPercent } from "../core/format.js";
import {
  canonical,
  claimEvent,
  reasonOf,
  sessionIdSchema,
  toolEndEvents,
  toolTouch,
  worstAnswer,
  type ToolOutcome,
} from "./common.js";
import type { UsageReader } from "./transcript.js";

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

/** What one hook call records, and how to turn the answers into the agent's reply. */
export interface HookPlan {
  scope: string;
  events: EventInput[];
  /** The agent's JSON reply, or null for "nothing to say" (allow). */
  reply(answers: Answer[], state: State | null): object | null;
}

/** One agent's hook protocol: how to read its input and how to answer it. */
export interface AgentAdapter<I = unknown> {
  name: string;
  /** Checks the hook input; unknown fields are ignored. */
  input: z.ZodType<I>;
  /** The session id, scope of every event of the call. */
  session(input: I): string;
  /** The project folder the agent runs in, when the input says. */
  cwd(input: I): string | undefined;
  /**
   * The environment variables in which the agent gives its hooks the project it was started in, in order of
   * preference: only its own, since a hook of one agent may run inside another agent's session.
   */
  projectEnv: readonly string[];
  /** Whether the plan needs the scope's state before the call (a hook that closes the previous task). */
  needsState(input: I): boolean;
  plan(input: I, ctx: HookContext): HookPlan;
}

export interface HookContext {
  policy: Policy;
  transcripts: UsageReader;
  /** The scope's state before this call, for events that depend on it (the previous prompt's task). */
  before: State | null;
}

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/** One line for the model about the session's budget and breaker. */
export function statusLine(state: State | null, policy: Policy): string {
  if (state === null) return "reins is guarding this session: no spend recorded yet.";
  const s = scopeSummary(state, policy);
  const tokens = s.budget.find((b) => b.resource === "tokens");
  const budget =
    tokens === undefined
      ? "no token limit"
      : `${formatCount(tokens.used)} of ${formatCount(tokens.limit)} tokens used (${formatPercent(tokens.ratio)})`;
  const breaker =
    s.breaker.status === "closed"
      ? "circuit breaker closed"
      : `circuit breaker ${s.breaker.status.replace("_", "-")}: ${s.breaker.detail ?? ""}`;
  const paused =
    s.status === "paused" ? " The budget is paused: stop and wait for a person to extend it." : "";
  return `reins: session budget ${budget}; ${breaker}.${paused}`;
}

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
 * (DESIGN.md, "Agent CLI integration").
 */
export function planClaude(input: ClaudeInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.session_id}`;
  const task =
    input.prompt_id !== undefined && input.prompt_id !== "" ? { task: `prompt-${input.prompt_id}` } : {};
  const usage = () => ctx.transcripts.read(input.session_id, input.transcript_path, ctx.policy);
  const tool = input.tool_name ?? "unknown";
  const touch = () => toolTouch(tool, input.tool_input, input.tool_use_id);
  const none = () => null;

  switch (input.hook_event_name) {
    case "SessionStart":
      return {
        scope,
        events: [{ kind: "session.started", agent: "claude-code" }],
        reply: (_answers, state) => ({
          hookSpecificOutput: {
            hookEventName: "SessionStart",
            additionalContext: statusLine(state, ctx.policy),
          },
        }),
      };
    case "SessionEnd":
      return { scope, events: [...usage(), { kind: "session.ended" }], reply: none };
    case "UserPromptSubmit": {
      const events: EventInput[] = [];
      const previous = ctx.before?.task ?? "";
      if (previous.startsWith("prompt-") && ctx.before?.inFlight.includes(previous) === true) {
        events.push({ kind: "task.ended", task: previous, status: "done" });
      }
      if ("task" in task) events.push({ kind: "task.started", task: task.task, taskType: "prompt" });
      return {
        scope,
        events: [...usage(), ...events],
        reply: (_answers, state) => ({
          hookSpecificOutput: {
            hookEventName: "UserPromptSubmit",
            additionalContext: statusLine(state, ctx.policy),
          },
        }),
      };
    }
    case "PreToolUse":
      return {
        scope,
        events: [{ kind: "tool.requested", ...task, ...touch() }],
        reply: (answers) => {
          const answer = worstAnswer(answers);
          if (answer === null || answer.verdict === "allow") return null;
          const reason = reasonOf(answer);
          if (answer.verdict === "block") {
            return {
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: reason,
              },
            };
          }
          if (answer.needsHuman) {
            return {
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "ask",
                permissionDecisionReason: reason,
              },
            };
          }
          return { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: reason } };
        },
      };
    case "PostToolUse":
    case "PostToolUseFailure": {
      const events = toolEndEvents(touch(), claudeOutcome(input), ctx.policy, task.task);
      return {
        scope,
        events: [...events, ...usage()],
        reply: (answers) => {
          const answer = worstAnswer(answers);
          if (answer === null || answer.verdict === "allow") return null;
          if (answer.verdict === "block") return { decision: "block", reason: reasonOf(answer) };
          return {
            hookSpecificOutput: { hookEventName: input.hook_event_name, additionalContext: reasonOf(answer) },
          };
        },
      };
    }
    case "Stop":
    case "SubagentStop":
      return {
        scope,
        events: [...usage(), claimEvent(ctx.policy, input.last_assistant_message, task.task)],
        reply: (answers) => {
          const answer = answers[answers.length - 1] ?? null;
          if (answer === null || answer.verdict === "allow") return null;
          if (answer.verdict === "block") return { decision: "block", reason: reasonOf(answer) };
          return { systemMessage: reasonOf(answer) };
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
