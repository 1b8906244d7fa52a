/** GitHub Copilot CLI's hook protocol: its input (which names no event), its usage, its replies. */
import * as z from "zod";
import type { AgentAdapter, AgentName, HookContext, HookPlan } from "./agent-adapter.js";
import { canonical } from "../../base/vocabulary/hash.js";
import { claimEvent, toolEndEvents, type ToolOutcome } from "../../base/vocabulary/event-builders.js";
import { verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { sessionIdSchema } from "./session-id.js";
import { toolTouch } from "../../base/vocabulary/tool-touch.js";
import { statusLine } from "./status-line.js";
import { copilotStorePath } from "./copilot-usage.js";

/**
 * GitHub Copilot CLI's hook protocol (`.github/hooks/*.json`: `{"version": 1, "hooks": {"preToolUse":
 * [{"type": "command", "bash": "…", "timeoutSec": 30}]}}`, camelCase events). Field names are those of the
 * hook types Copilot CLI 1.0.102 ships (`copilot-sdk/types.d.ts`) and of what it was seen to send: every
 * input carries `sessionId`, `timestamp` and `cwd`, and no event name, so the event is told by its fields
 * (`copilotEvent`). Replies: `permissionDecision: "deny"` + `permissionDecisionReason` (preToolUse),
 * `additionalContext` (sessionStart, userPromptSubmitted, preToolUse, postToolUse, postToolUseFailure),
 * `decision: "block"` + `reason` (agentStop: the reason is the next prompt).
 *
 * Token usage is in no hook input: Copilot records each model call in its session store
 * (`$COPILOT_HOME/session-store.db`, see copilot-usage.ts) as the call ends, and only agentStop names where
 * that is (its `transcriptPath` lies beside it). So the usage is read incrementally at each turn's end, and
 * at each tool call's end once a turn has ended, and once more at the session's end (the last call's row can
 * land after the last agentStop read the store).
 */

/** The Copilot CLI hook events reins answers, as its hooks file names them. */
export const COPILOT_EVENTS = [
  "sessionStart",
  "userPromptSubmitted",
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "agentStop",
  "sessionEnd",
] as const;

/** A Copilot CLI hook event reins answers. */
export type CopilotEvent = (typeof COPILOT_EVENTS)[number];

/**
 * The fields of Copilot CLI's hook input that reins reads; everything else is ignored. Built on first use: a
 * hook process parses only one agent's input.
 */
export const copilotInput = z.lazy(() =>
  z
    .object({
      sessionId: sessionIdSchema(),
      timestamp: z.union([z.number(), z.string().max(64)]).optional(),
      cwd: z.string().max(4096).optional(),
      toolName: z.string().max(256).optional(),
      toolArgs: z.unknown().optional(),
      toolResult: z.unknown().optional(),
      /** postToolUseFailure's failure message (and errorOccurred's, with `errorContext`). */
      error: z.unknown().optional(),
      errorContext: z.string().max(64).optional(),
      prompt: z.string().optional(),
      /** sessionStart: `new`, `startup` or `resume`. */
      source: z.string().max(64).optional(),
      initialPrompt: z.string().optional(),
      /** sessionEnd: `complete`, `error`, `abort`, `timeout` or `user_exit`. */
      reason: z.string().max(256).optional(),
      transcriptPath: z.string().max(4096).optional(),
      stopReason: z.string().max(64).optional(),
      stop_hook_active: z.boolean().optional(),
      stopHookActive: z.boolean().optional(),
      agentName: z.string().max(256).optional(),
    })
    .loose(),
);

export type CopilotInput = z.infer<typeof copilotInput>;

/**
 * The event a Copilot CLI hook input stands for, told by its fields, since Copilot names none: a tool's
 * name with a result (postToolUse), with an error (postToolUseFailure) or alone (preToolUse); a stop reason
 * or transcript (agentStop); a prompt (userPromptSubmitted); a source (sessionStart); an end reason
 * (sessionEnd). Null for another event (errorOccurred, a subagent's start or stop): reins says nothing to it.
 */
export function copilotEvent(input: CopilotInput): CopilotEvent | null {
  if (input.agentName !== undefined || input.errorContext !== undefined) return null;
  if (input.toolName !== undefined) {
    if (input.toolResult !== undefined) return "postToolUse";
    if (input.error !== undefined) return "postToolUseFailure";
    return "preToolUse";
  }
  if (input.stopReason !== undefined || input.transcriptPath !== undefined) return "agentStop";
  if (input.prompt !== undefined) return "userPromptSubmitted";
  if (input.source !== undefined) return "sessionStart";
  if (input.reason !== undefined) return "sessionEnd";
  return null;
}

const record = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});

/**
 * How a Copilot CLI tool call ended. postToolUse's `toolResult` is `{ resultType, textResultForLlm }`; its
 * `bash` tool reports a command's status only in the text, as a last line `<shellId: N completed with exit
 * code K>` (with `resultType: "success"` even for a failing command). postToolUseFailure gives the failure's
 * message alone (`error`).
 */
export function copilotOutcome(input: CopilotInput): ToolOutcome {
  if (input.toolResult === undefined) {
    const text = typeof input.error === "string" ? input.error : canonical(input.error ?? "error");
    return { failed: true, text, output: { error: text } };
  }
  const result = record(input.toolResult);
  const content =
    typeof result.textResultForLlm === "string"
      ? result.textResultForLlm
      : canonical(result.textResultForLlm ?? "");
  const match = [...content.matchAll(/<shellId: \S+ completed with exit code (-?\d+)>/g)].at(-1);
  const exitCode = match?.[1] === undefined ? undefined : Number(match[1]);
  const failed =
    (typeof result.resultType === "string" && !["success", ""].includes(result.resultType)) ||
    (exitCode !== undefined && exitCode !== 0);
  // The shell's id counts up on every command: without it, the same result hashes the same.
  const stable = content.replace(/<shellId: \S+ (completed with exit code -?\d+)>/g, "<$1>");
  return { failed, text: stable, output: stable, ...(exitCode !== undefined ? { exitCode } : {}) };
}

/**
 * The session's model calls since the last reading, from Copilot's session store: found from agentStop's
 * `transcriptPath` (`atStop`), and at a tool call's end in the store an earlier agentStop named (none before
 * the session's first turn ends: Copilot names no path in its tool hooks).
 */
function copilotUsage(input: CopilotInput, ctx: HookContext, atStop: boolean) {
  const path =
    atStop && input.transcriptPath !== undefined ? copilotStorePath(input.transcriptPath) : undefined;
  return ctx.transcripts.readCopilot?.(input.sessionId, path, ctx.policy) ?? [];
}

/** The reply that gives the model context (Copilot reads `additionalContext` from most of its hooks). */
const contextOf = (text: string) => ({ additionalContext: text });

/** The reply at a turn's start: the status line and the notices, as context for the model. */
function statusOf(ctx: HookContext): HookPlan["reply"] {
  return (_answers, state) =>
    contextOf([statusLine(state, ctx.policy), ...(ctx.notices?.("turn") ?? [])].join("\n"));
}

/** A tool call's end: its events, and warnings and blocks as context (the call already ran). */
function toolEnd(input: CopilotInput, ctx: HookContext, scope: string): HookPlan {
  const touch = toolTouch(input.toolName ?? "unknown", input.toolArgs);
  return {
    scope,
    events: [...toolEndEvents(touch, copilotOutcome(input), ctx.policy), ...copilotUsage(input, ctx, false)],
    reply: (answers) => {
      const verdict = verdictOf(worstAnswer(answers), ctx.notices);
      return verdict === null ? null : contextOf(verdict.reason);
    },
  };
}

/** Turns one Copilot CLI hook call into reins events and a reply in Copilot's protocol. */
export function planCopilot(input: CopilotInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.sessionId}`;
  // Copilot's inputs name no prompt or turn, so its events are not split into per-prompt tasks (as Gemini's).
  const none = () => null;
  switch (copilotEvent(input)) {
    case "sessionStart":
      return {
        scope,
        events: [{ kind: "session.started", agent: "copilot" satisfies AgentName }],
        reply: statusOf(ctx),
        turn: "open",
      };
    case "userPromptSubmitted":
      return { scope, events: [], reply: statusOf(ctx), turn: "open" };
    case "preToolUse":
      return {
        scope,
        events: [{ kind: "tool.requested", ...toolTouch(input.toolName ?? "unknown", input.toolArgs) }],
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          if (verdict === null) return null;
          if (verdict.form === "note") return contextOf(verdict.reason);
          // A person's confirmation becomes a deny whose reason says what to confirm: `ask` in a prompt-mode
          // session that allows every tool is not put to anyone.
          return { permissionDecision: "deny", permissionDecisionReason: verdict.reason };
        },
      };
    case "postToolUse":
    case "postToolUseFailure":
      return toolEnd(input, ctx, scope);
    case "agentStop":
      return {
        scope,
        turn: "close",
        events: [...copilotUsage(input, ctx, true), claimEvent(ctx.policy, "")],
        reply: (answers) => {
          // The claim's own answer decides, not the usage's.
          const verdict = verdictOf(answers[answers.length - 1], ctx.notices);
          if (verdict === null) return null;
          // Copilot's "keep going": a blocked agentStop gives the reason to the model as the next prompt.
          if (verdict.form === "deny") return { decision: "block", reason: verdict.reason };
          return null;
        },
      };
    case "sessionEnd":
      return {
        scope,
        turn: "close",
        // The last model call's row may land after the last agentStop read the store: read it once more.
        events: [
          ...copilotUsage(input, ctx, true),
          { kind: "session.ended", ...(input.reason !== undefined ? { reason: input.reason } : {}) },
        ],
        reply: none,
      };
    case null:
      return { scope, events: [], reply: none };
  }
}

/** GitHub Copilot CLI's hook protocol. */
export const copilot: AgentAdapter<CopilotInput> = {
  name: "copilot",
  input: copilotInput,
  session: (input) => input.sessionId,
  cwd: (input) => input.cwd,
  // Copilot CLI (1.0.102) sets COPILOT_PROJECT_DIR to the project, and CLAUDE_PROJECT_DIR as an alias.
  projectEnv: ["COPILOT_PROJECT_DIR"],
  needsState: () => false,
  plan: planCopilot,
};
