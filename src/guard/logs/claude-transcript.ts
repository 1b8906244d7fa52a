/** Reads a Claude Code session transcript back as the hook calls Claude Code made. */
import { entryUsage, type TranscriptEntry } from "../hooks/transcript.js";
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import { addLeftoverUsage, timeOf, type LoggedCall, type LoggedRun } from "./run.js";

/**
 * Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON entry per line.
 * A `user` entry holds a prompt or tool results (with the tool's structured result as `toolUseResult`, the
 * same object its PostToolUse hook receives), an `assistant` entry holds text and `tool_use` blocks and the
 * API message's usage. Read back as the hook calls Claude Code made: SessionStart, UserPromptSubmit,
 * PreToolUse, PostToolUse or PostToolUseFailure, Stop (SubagentStop inside a subagent), with the usage the
 * hook would have read from the transcript at that moment.
 */

interface Block {
  type?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  text?: unknown;
  content?: unknown;
  tool_use_id?: unknown;
  is_error?: unknown;
}

interface Entry extends TranscriptEntry {
  sessionId?: unknown;
  timestamp?: unknown;
  cwd?: unknown;
  promptId?: unknown;
  isSidechain?: unknown;
  isMeta?: unknown;
  toolUseResult?: unknown;
  message?: TranscriptEntry["message"] & { content?: unknown; stop_reason?: unknown };
}

/** Whether JSONL rows are a Claude Code transcript. */
export function isClaudeTranscript(rows: readonly Record<string, unknown>[]): boolean {
  return rows.some(
    (r) =>
      typeof r.sessionId === "string" &&
      (r.type === "user" || r.type === "assistant") &&
      typeof r.message === "object" &&
      r.message !== null,
  );
}

const blocks = (content: unknown): Block[] =>
  Array.isArray(content) ? content.filter((b): b is Block => typeof b === "object" && b !== null) : [];

/** The text of a message's content or of a tool result's content. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return blocks(content)
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");
}

/** Whether a transcript entry continues the API message seen last (one message is written over several lines). */
function sameMessage(entry: Entry, last: unknown): boolean {
  return entry.message?.id !== undefined && entry.message.id === last;
}

/** Results the tool never produced: a hook or the user refused the call, so no PostToolUse hook ran. */
const REFUSED =
  /^(?:\S+ hook error: |Permission to use \S+ has been denied|The user doesn't want to proceed)/;

/** User entries Claude Code writes itself: hook feedback, an interruption notice. */
const NOT_A_PROMPT = /^(?:Stop hook feedback:|\S+ hook (?:feedback|error):|\[Request interrupted)/;

/** Reads the parsed lines of a Claude Code transcript. */
export function readClaudeTranscript(
  rows: readonly Record<string, unknown>[],
  source: string,
  fallbackId: string,
): LoggedRun {
  const entries = rows as readonly Entry[];
  const first = entries.find((e) => typeof e.sessionId === "string");
  const id = typeof first?.sessionId === "string" ? first.sessionId : fallbackId;
  let clock = timeOf(first?.timestamp, 0);
  const cwd = entries.find((e) => typeof e.cwd === "string")?.cwd;
  const base = { session_id: id, ...(typeof cwd === "string" ? { cwd } : {}) };
  const calls: LoggedCall[] = [
    { at: clock, input: { ...base, hook_event_name: "SessionStart", source: "startup" } },
  ];
  const tools = new Map<string, { name: string; input: unknown }>();
  let lastMessage: unknown;
  let promptId: string | undefined;
  let pending = new Map<string, UsageRecord>();
  /**
   * A message's tool calls run one after another, each PreToolUse just before its tool runs: a call's
   * PreToolUse is held until its result (or the next message) comes, and the ones before it go first.
   */
  let queued: LoggedCall[] = [];
  const flush = (until: unknown) => {
    const at = queued.findIndex((c) => c.input.tool_use_id === until);
    const cut = at < 0 ? queued.length : at + 1;
    // It fires when its tool starts: after the ones before it finished.
    for (const call of queued.slice(0, cut)) calls.push({ ...call, at: Math.max(call.at, clock) });
    queued = queued.slice(cut);
  };
  /** A hook that reads the transcript gets the usage written since the last one that did. */
  const reading = (at: number, input: Record<string, unknown>) => {
    calls.push({ at, input, usage: [...pending.values()] });
    pending = new Map();
  };

  for (const [n, entry] of entries.entries()) {
    if (entry.type !== "user" && entry.type !== "assistant") continue;
    clock = Math.max(clock, timeOf(entry.timestamp, clock));
    // Assistant entries carry no prompt id; the hooks of their calls carry the prompt's they answer.
    if (typeof entry.promptId === "string") promptId = entry.promptId;
    const prompt = promptId !== undefined ? { prompt_id: promptId } : {};
    const content = entry.message?.content;
    if (entry.type === "assistant") {
      // A new API message: whatever the last one asked for and got no result was refused before it ran.
      if (queued.length > 0 && queued[0]?.input.tool_use_id !== undefined && !sameMessage(entry, lastMessage))
        flush(null);
      lastMessage = entry.message?.id;
      const usage = entryUsage(entry, `${id}#${n}`);
      if (usage !== null) pending.set(usage.id, usage);
      const uses = blocks(content).filter((b) => b.type === "tool_use" && typeof b.id === "string");
      for (const use of uses) {
        const name = typeof use.name === "string" ? use.name : "unknown";
        tools.set(use.id as string, { name, input: use.input ?? {} });
        queued.push({
          at: clock,
          input: {
            ...base,
            ...prompt,
            hook_event_name: "PreToolUse",
            tool_name: name,
            tool_input: use.input ?? {},
            tool_use_id: use.id,
          },
        });
      }
      if (uses.length === 0 && entry.message?.stop_reason === "end_turn") {
        flush(null);
        reading(clock, {
          ...base,
          ...prompt,
          hook_event_name: entry.isSidechain === true ? "SubagentStop" : "Stop",
          stop_hook_active: false,
          last_assistant_message: textOf(content),
        });
      }
      continue;
    }
    if (entry.isMeta === true) continue;
    const results = blocks(content).filter((b) => b.type === "tool_result");
    if (results.length === 0) {
      // A subagent's prompt comes from the Task tool, and hook feedback or an interruption from Claude Code:
      // none of them is a prompt the user submitted.
      if (entry.isSidechain === true || NOT_A_PROMPT.test(textOf(content))) continue;
      flush(null);
      reading(clock, { ...base, ...prompt, hook_event_name: "UserPromptSubmit", prompt: textOf(content) });
      continue;
    }
    for (const result of results) {
      const use = typeof result.tool_use_id === "string" ? tools.get(result.tool_use_id) : undefined;
      if (use === undefined) continue;
      flush(result.tool_use_id);
      const text = textOf(result.content);
      if (REFUSED.test(text)) continue;
      const tool = { tool_name: use.name, tool_input: use.input, tool_use_id: result.tool_use_id };
      reading(
        clock,
        result.is_error === true
          ? { ...base, ...prompt, hook_event_name: "PostToolUseFailure", ...tool, error: text }
          : {
              ...base,
              ...prompt,
              hook_event_name: "PostToolUse",
              ...tool,
              // One result per entry carries the structured result the hook receives; else the text.
              tool_response:
                results.length === 1 && entry.toolUseResult !== undefined ? entry.toolUseResult : text,
            },
      );
    }
  }
  flush(null);
  addLeftoverUsage(calls, [...pending.values()]);
  return { id, agent: "claude", format: "claude-transcript", source, calls };
}
