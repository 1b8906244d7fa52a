/** Gemini CLI's hook protocol: its input, its model usage, and the replies in its forms. */
import * as z from "zod";
import type { EventInput } from "../../base/core/reins-event.js";
import type { Policy } from "../../base/core/policy.js";
import type { AgentAdapter, AgentName, HookContext, HookPlan } from "./agent-adapter.js";
import { usageEvent, type UsageRecord } from "../../base/vocabulary/usage.js";
import { canonical, hashOf } from "../../base/vocabulary/hash.js";
import { claimEvent, toolEndEvents, type ToolOutcome } from "../../base/vocabulary/event-builders.js";
import { contextReply, verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { sessionIdSchema } from "./session-id.js";
import { toolTouch } from "../../base/vocabulary/tool-touch.js";
import { statusReply } from "./status-line.js";

/**
 * Gemini CLI's hook protocol (`hooks` in `.gemini/settings.json`, timeouts in milliseconds). Field names are
 * those of Gemini CLI's hooks reference (docs/hooks/reference.md) and its hook types
 * (packages/core/src/hooks/types.ts, hookTranslator.ts). Every input carries `session_id`,
 * `transcript_path`, `cwd`, `hook_event_name` and `timestamp`; replies use `decision: "deny"` + `reason`,
 * `systemMessage`, and `hookSpecificOutput.additionalContext`.
 *
 * Gemini CLI's inputs carry no prompt or turn id, so its events are not split into per-prompt tasks.
 */

/** The Gemini CLI hook events reins answers; any other is refused as bad input (allowed, with one stderr line). */
export const GEMINI_EVENTS = [
  "SessionStart",
  "SessionEnd",
  "BeforeAgent",
  "AfterAgent",
  "BeforeTool",
  "AfterTool",
  "AfterModel",
] as const;

/**
 * The fields of Gemini CLI's hook input that reins reads; everything else is ignored. Built on first use: a
 * hook process parses only one agent's input.
 */
export const geminiInput = z.lazy(() =>
  z
    .object({
      session_id: sessionIdSchema(),
      hook_event_name: z.enum(GEMINI_EVENTS),
      transcript_path: z.string().max(4096).optional(),
      cwd: z.string().max(4096).optional(),
      timestamp: z.string().max(64).optional(),
      tool_name: z.string().max(256).optional(),
      tool_input: z.unknown().optional(),
      tool_response: z.unknown().optional(),
      prompt: z.string().optional(),
      prompt_response: z.string().optional(),
      stop_hook_active: z.boolean().optional(),
      source: z.string().max(64).optional(),
      reason: z.string().max(256).optional(),
      llm_request: z.unknown().optional(),
      llm_response: z.unknown().optional(),
    })
    .loose(),
);

export type GeminiInput = z.infer<typeof geminiInput>;

const record = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});
const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** The last `<label>: <value>` line of a text, e.g. the `Exit Code: 1` run_shell_command adds after the output. */
function lastLine(text: string, label: string): string | undefined {
  let found: string | undefined;
  for (const m of text.matchAll(new RegExp(`^${label}: (.*)$`, "gm"))) found = m[1];
  return found;
}

/**
 * How a Gemini CLI tool call ended. `tool_response` is `{ llmContent, returnDisplay, error? }`; `error` is
 * set when the tool itself failed. `run_shell_command` reports a command's failure only in its text:
 * `Exit Code: N` (older versions print `Exit Code: 0` too), `Signal: ...`, or a cancellation notice.
 */
export function geminiOutcome(response: unknown): ToolOutcome {
  const r = record(response);
  const content = typeof r.llmContent === "string" ? r.llmContent : canonical(r.llmContent ?? "");
  const error = record(r.error);
  const errorMessage =
    typeof error.message === "string" ? error.message : r.error !== undefined ? "error" : "";
  const code = lastLine(content, "Exit Code");
  const exitCode = code !== undefined && /^-?\d+$/.test(code.trim()) ? Number(code.trim()) : undefined;
  const signal = lastLine(content, "Signal");
  const failed =
    errorMessage !== "" ||
    (exitCode !== undefined && exitCode !== 0) ||
    (signal !== undefined && signal.trim() !== "" && signal.trim() !== "(none)") ||
    /^Command was (automatically )?cancelled/.test(content);
  // The process ids run_shell_command appends change on every run: without them, the same result hashes the same.
  const stable = content.replace(/^(?:Process Group PGID|Background PIDs): .*$/gm, "");
  // run_shell_command prints `Exit Code: N` only when the command fails: a finished command without one,
  // with no error, signal or cancellation, exited 0 (as Claude Code's PostToolUse means exit 0).
  const finished = exitCode ?? (failed ? undefined : 0);
  return {
    failed,
    text: errorMessage !== "" ? `${errorMessage}\n${stable}` : stable,
    output: { content: stable, error: errorMessage },
    ...(finished !== undefined ? { exitCode: finished } : {}),
  };
}

/** A model call's token counts as the Gemini API reports them (`usageMetadata`), each read as a count. */
export interface GeminiCounts {
  /** `promptTokenCount`: includes the cached tokens. */
  prompt: unknown;
  /** `cachedContentTokenCount`. */
  cached: unknown;
  /** `candidatesTokenCount`: leaves the thinking tokens out. */
  candidates: unknown;
  /** `thoughtsTokenCount`. */
  thoughts: unknown;
  /** `totalTokenCount`: counts the thinking tokens too. */
  total: unknown;
  /** `toolUsePromptTokenCount`. */
  toolUsePrompt: unknown;
}

/**
 * Gemini's counts as the tokens reins prices: input is the prompt less its cached part, and output is what
 * the total adds beyond the prompt and the tool-use prompt (so thinking counts), at least the shown output.
 * Shared by the live AfterModel reading and the chat-recording importer.
 */
export function geminiTokens(
  counts: GeminiCounts,
): Pick<UsageRecord, "input" | "output" | "cacheRead" | "cacheWrite"> {
  const prompt = count(counts.prompt);
  const cached = Math.min(count(counts.cached), prompt);
  const shown = count(counts.candidates) + count(counts.thoughts);
  return {
    input: prompt - cached,
    output: Math.max(shown, count(counts.total) - prompt - count(counts.toolUsePrompt)),
    cacheRead: cached,
    cacheWrite: 0,
  };
}

/**
 * Token usage from an AfterModel call's `llm_response.usageMetadata`. AfterModel fires for every streamed
 * chunk, so only a final chunk (one whose candidate has a `finishReason`, or a usage-only chunk) counts, and
 * its id is derived from the session, the chunk's time and its usage, the same for a redelivered event: the
 * store applies it once. Gemini CLI passes hooks `promptTokenCount`,
 * `candidatesTokenCount` and `totalTokenCount`; `cachedContentTokenCount`, `thoughtsTokenCount` and
 * `toolUsePromptTokenCount` (the Gemini API's other fields) are read when present. `promptTokenCount`
 * includes the cached tokens; `totalTokenCount` also counts the thinking tokens that `candidatesTokenCount`
 * leaves out, so output is what the total adds to the prompt.
 */
export function geminiUsage(input: GeminiInput, policy: Policy): EventInput[] {
  const response = record(input.llm_response);
  const meta = record(response.usageMetadata);
  if (Object.keys(meta).length === 0) return [];
  const candidates = Array.isArray(response.candidates) ? (response.candidates as unknown[]) : [];
  const final =
    candidates.length === 0 ||
    candidates.some((c) => {
      const reason = record(c).finishReason;
      return typeof reason === "string" && reason !== "";
    });
  if (!final) return [];
  const usage = geminiTokens({
    prompt: meta.promptTokenCount,
    cached: meta.cachedContentTokenCount,
    candidates: meta.candidatesTokenCount,
    thoughts: meta.thoughtsTokenCount,
    total: meta.totalTokenCount,
    toolUsePrompt: meta.toolUsePromptTokenCount,
  });
  const model = record(input.llm_request).model;
  const name = typeof model === "string" && model !== "" ? model : undefined;
  // One model call's final chunk comes once, at its own time: the time and the usage identify it (the
  // request does not: AfterModel keeps only the history's text parts, the same for every call between two
  // text turns). The same hook input delivered again has the same time, and counts once.
  const key = ["gemini", input.session_id, input.timestamp ?? hashOf(input.llm_request ?? null), meta];
  return [usageEvent({ id: hashOf(key), ...usage, ...(name !== undefined ? { model: name } : {}) }, policy)];
}

/** Turns one Gemini CLI hook call into reins events and a reply in Gemini CLI's protocol. */
export function planGemini(input: GeminiInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.session_id}`;
  const tool = input.tool_name ?? "unknown";
  const none = () => null;

  switch (input.hook_event_name) {
    case "SessionStart":
      return {
        scope,
        events: [{ kind: "session.started", agent: "gemini" satisfies AgentName }],
        reply: statusReply("SessionStart", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "SessionEnd":
      return {
        scope,
        turn: "close",
        events: [{ kind: "session.ended", ...(input.reason !== undefined ? { reason: input.reason } : {}) }],
        // Gemini CLI does not wait for SessionEnd hooks and ignores their flow control.
        reply: none,
      };
    case "BeforeAgent":
      return {
        scope,
        events: [],
        reply: statusReply("BeforeAgent", ctx.policy, ctx.notices),
        turn: "open",
      };
    case "BeforeTool":
      return {
        scope,
        events: [{ kind: "tool.requested", ...toolTouch(tool, input.tool_input) }],
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          if (verdict === null) return null;
          // BeforeTool has no "ask" (an `ask` decision is not acted on), so a person's confirmation becomes
          // a deny; and no context for the model, so a warning goes to the person as `systemMessage`.
          if (verdict.form === "note") return { systemMessage: verdict.reason };
          return { decision: "deny", reason: verdict.reason };
        },
      };
    case "AfterTool":
      return {
        scope,
        events: toolEndEvents(
          toolTouch(tool, input.tool_input),
          geminiOutcome(input.tool_response),
          ctx.policy,
        ),
        // The tool already ran. AfterTool's `decision: "deny"` would replace its result with the reason,
        // hiding what the model needs to fix the problem; a block takes effect at the next BeforeTool
        // anyway. So both blocks and warnings are appended as context.
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          return verdict === null ? null : contextReply("AfterTool", verdict.reason);
        },
      };
    case "AfterModel":
      return {
        scope,
        events: geminiUsage(input, ctx.policy),
        // A budget threshold this usage crosses fires once, here: the person sees it. A deny would discard
        // the chunk the model already produced (and paid for); a paused budget is enforced at the next
        // BeforeTool, and lets the agent stop at AfterAgent.
        reply: (answers) => {
          const verdict = verdictOf(worstAnswer(answers), ctx.notices);
          return verdict === null ? null : { systemMessage: verdict.reason };
        },
      };
    case "AfterAgent":
      return {
        scope,
        turn: "close",
        events: [claimEvent(ctx.policy, input.prompt_response)],
        reply: (answers) => {
          const verdict = verdictOf(answers[answers.length - 1], ctx.notices);
          if (verdict === null) return null;
          // Gemini CLI's "keep going": a denied AfterAgent is retried with the reason as the new prompt.
          if (verdict.form === "deny") return { decision: "deny", reason: verdict.reason };
          return { systemMessage: verdict.reason };
        },
      };
  }
}

/** Gemini CLI's hook protocol. */
export const gemini: AgentAdapter<GeminiInput> = {
  name: "gemini",
  input: geminiInput,
  session: (input) => input.session_id,
  cwd: (input) => input.cwd,
  // Gemini CLI (0.61) sets both to the project, CLAUDE_PROJECT_DIR as an alias for Claude Code's hooks.
  projectEnv: ["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
  needsState: () => false,
  plan: planGemini,
};
