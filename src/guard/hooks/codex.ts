/** Codex CLI's hook protocol: its input, usage and exit codes read from its rollout, its replies. */
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
 * Codex CLI's hook protocol (`.codex/hooks.json`, or `[hooks]` in `.codex/config.toml`): nearly Claude
 * Code's JSON, with a `turn_id` on every turn-scoped input. Field names are those of Codex's published input
 * and output schemas (`codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json`).
 *
 * Usage and exit codes: no Codex hook input carries token usage, and a shell call's `tool_response` is its
 * output without the exit code. Both are in the session's rollout (`transcript_path`), which this adapter
 * reads incrementally, like Claude Code's transcript: usage at every hook but PreToolUse, and a command's exit
 * code at its PostToolUse.
 */

/** The Codex hook events reins answers; any other is refused as bad input (allowed, with one stderr line). */
export const CODEX_EVENTS = [
  "SessionStart",
  "SessionEnd",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "Stop",
  "SubagentStop",
] as const;

/**
 * The fields of Codex's hook input that reins reads; everything else is ignored. Built on first use: a
 * hook process parses only one agent's input.
 */
export const codexInput = z.lazy(() =>
  z
    .object({
      session_id: sessionIdSchema(),
      hook_event_name: z.enum(CODEX_EVENTS),
      /** Codex's extension: the active turn, on every turn-scoped event (not on SessionStart/SessionEnd). */
      turn_id: z.string().max(256).optional(),
      transcript_path: z.string().max(4096).nullable().optional(),
      cwd: z.string().max(4096).optional(),
      model: z.string().max(256).optional(),
      tool_name: z.string().max(256).optional(),
      tool_input: z.unknown().optional(),
      tool_response: z.unknown().optional(),
      tool_use_id: z.string().max(256).optional(),
      stop_hook_active: z.boolean().optional(),
      last_assistant_message: z.string().nullable().optional(),
      prompt: z.string().optional(),
      source: z.string().max(64).optional(),
      reason: z.string().max(256).optional(),
    })
    .loose(),
);

export type CodexInput = z.infer<typeof codexInput>;

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/**
 * How a Codex tool call ended. Codex documents `tool_response` as any JSON value; for `Bash` it is the
 * command's output text alone, with no exit code (openai/codex#34289, #42864), and `apply_patch` gives its
 * result text. So: an object is read like Claude Code's (`exit_code`, `is_error`...); a string counts as
 * failed only when a header line says so (`Exit code: N` / `Process exited with code N`, the forms Codex
 * shows the model). Otherwise the outcome is unknown and counted as a success: reins never blocks on a
 * guessed failure, at the price that a failing check Codex does not report as failing counts as passed.
 */
export function codexOutcome(response: unknown): ToolOutcome {
  if (typeof response === "string") {
    const header = response.split("\n", 3).join("\n");
    const m = /^(?:Exit code:|Process exited with code)\s*(-?\d+)/m.exec(header);
    const exitCode = m === null ? undefined : Number(m[1]);
    const failed = exitCode !== undefined && exitCode !== 0;
    // Header lines that change on every run (wall time, chunk ids) do not make a result new.
    const output = response.replace(/^(?:Chunk ID|Wall time|Original token count): .*$/gm, "");
    return { failed, text: output, output, ...(exitCode !== undefined ? { exitCode } : {}) };
  }
  const r = (response !== null && typeof response === "object" ? response : {}) as Record<string, unknown>;
  const exitCode = num(r.exit_code) ?? num(r.exitCode);
  const failed =
    r.is_error === true ||
    r.success === false ||
    r.interrupted === true ||
    (exitCode !== undefined && exitCode !== 0);
  const text = `${str(r.stdout) ?? ""}${str(r.stderr) ?? ""}${str(r.output) ?? ""}`;
  return {
    failed,
    text: text === "" && failed ? canonical(response ?? "") : text,
    output: response ?? null,
    ...(exitCode !== undefined ? { exitCode } : {}),
  };
}

/** Turns one Codex hook call into reins events and a reply in Codex's protocol. */
export function planCodex(input: CodexInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.session_id}`;
  const task = input.turn_id !== undefined && input.turn_id !== "" ? `turn-${input.turn_id}` : undefined;
  const tagged = task !== undefined ? { task } : {};
  const tool = input.tool_name ?? "unknown";
  const none = () => null;
  /** What the session's rollout says since the last call: usage, and commands' exit codes. */
  const rollout = () =>
    ctx.transcripts.readRollout(input.session_id, input.transcript_path ?? undefined, ctx.policy);

  switch (input.hook_event_name) {
    case "SessionStart":
      return {
        scope,
        events: [
          {
            kind: "session.started",
            agent: "codex" satisfies AgentName,
            ...(input.model !== undefined ? { model: input.model } : {}),
          },
        ],
        reply: statusReply("SessionStart", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "SessionEnd":
      return {
        scope,
        turn: "close",
        events: [
          ...rollout().usage,
          { kind: "session.ended", ...(input.reason !== undefined ? { reason: input.reason } : {}) },
        ],
        // Codex has no output schema for SessionEnd: nothing to say.
        reply: none,
      };
    case "UserPromptSubmit":
      return {
        scope,
        events: [...rollout().usage, ...promptTaskEvents(ctx.before, task, "turn-")],
        reply: statusReply("UserPromptSubmit", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "PreToolUse":
      return {
        scope,
        events: [
          { kind: "tool.requested", ...tagged, ...toolTouch(tool, input.tool_input, input.tool_use_id) },
        ],
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          if (verdict === null) return null;
          // Codex refuses `permissionDecision: "ask"` from PreToolUse (it fails open), so a person's
          // confirmation becomes a deny whose reason says what to confirm.
          if (verdict.form === "note") return contextReply("PreToolUse", verdict.reason);
          return {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: verdict.reason,
            },
          };
        },
      };
    case "PostToolUse": {
      const news = rollout();
      const reported = codexOutcome(input.tool_response);
      // Codex's hook gives a shell command's output without its exit code; its rollout has it.
      const code =
        reported.exitCode === undefined && input.tool_use_id !== undefined
          ? news.exitCode(input.tool_use_id)
          : undefined;
      const outcome = code === undefined ? reported : { ...reported, exitCode: code, failed: code !== 0 };
      return {
        scope,
        events: [
          ...toolEndEvents(toolTouch(tool, input.tool_input, input.tool_use_id), outcome, ctx.policy, task),
          ...news.usage,
        ],
        // The tool already ran. Codex's `decision: "block"` would replace its output with the reason, hiding
        // what the model needs to fix the problem; a block takes effect at the next PreToolUse anyway. So
        // both blocks and warnings are added context.
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          return verdict === null ? null : contextReply("PostToolUse", verdict.reason);
        },
      };
    }
    case "Stop":
    case "SubagentStop":
      return {
        scope,
        turn: "close",
        events: [...rollout().usage, claimEvent(ctx.policy, input.last_assistant_message, task)],
        reply: (answers) => {
          // The claim's own answer decides, not an earlier event's.
          const verdict = verdictOf(answers[answers.length - 1], ctx.notices);
          if (verdict === null) return null;
          // Codex's "keep going": a blocked Stop continues the turn with the reason as the next prompt.
          if (verdict.form === "deny") return { decision: "block", reason: verdict.reason };
          return { systemMessage: verdict.reason };
        },
      };
  }
}

/** Codex CLI's hook protocol. */
export const codex: AgentAdapter<CodexInput> = {
  name: "codex",
  input: codexInput,
  session: (input) => input.session_id,
  cwd: (input) => input.cwd,
  // Codex CLI names no project in its hooks' environment.
  projectEnv: [],
  needsState: (input) => input.hook_event_name === "UserPromptSubmit",
  plan: planCodex,
};
