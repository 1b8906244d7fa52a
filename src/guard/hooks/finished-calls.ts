/**
 * The tool calls a Claude Code transcript says finished: each `tool_result` block of a `user` line, with the
 * line's time and the tool's name when its `tool_use` is in the same lines. A turn's start compares them with
 * the calls the store holds (guard/hooks/tamper-check.ts): a call that finished with no event of its id ran
 * without reins answering its hook (Claude Code lets a tool call go ahead when its http hook gets no answer).
 */

/** A tool call the transcript says finished. */
export interface FinishedCall {
  /** Its `tool_use_id`. */
  id: string;
  /** When its result was written, epoch ms. */
  at: number;
  /** The tool's name, when its `tool_use` block was among the lines read. */
  tool?: string;
}

interface Block {
  type?: unknown;
  id?: unknown;
  name?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
}

interface Line {
  type?: unknown;
  timestamp?: unknown;
  message?: { content?: unknown };
}

/** How many finished calls one reading keeps: a turn's start after a long lapse says the count, not a list. */
const MAX_CALLS = 10_000;

const blocksOf = (line: Line): Block[] => {
  const content = line.message?.content;
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === "object" && b !== null) : [];
};

/**
 * Whether a result says the call never ran: Claude Code answers a call it refused before any hook (an input
 * that does not fit the tool, a tool that does not exist) with a `<tool_use_error>`, and fires no hook for it.
 */
function neverRan(content: unknown): boolean {
  const first: unknown = Array.isArray(content) ? content[0] : content;
  const text =
    typeof first === "string"
      ? first
      : typeof first === "object" && first !== null && typeof (first as { text?: unknown }).text === "string"
        ? (first as { text: string }).text
        : "";
  return text.trimStart().startsWith("<tool_use_error>");
}

/**
 * The finished calls in `text` (whole JSONL lines), in order. Only the lines that can hold a tool's use or
 * result are parsed; a line without a time is not counted (nothing says when it ran).
 */
export function finishedCalls(text: string): FinishedCall[] {
  const names = new Map<string, string>();
  const calls: FinishedCall[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"tool_')) continue;
    let entry: Line;
    try {
      entry = JSON.parse(line) as Line;
    } catch {
      continue;
    }
    if (entry.type === "assistant") {
      for (const b of blocksOf(entry))
        if (b.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string")
          names.set(b.id, b.name);
      continue;
    }
    const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
    if (entry.type !== "user" || !Number.isFinite(at)) continue;
    for (const b of blocksOf(entry)) {
      if (b.type !== "tool_result" || typeof b.tool_use_id !== "string" || neverRan(b.content)) continue;
      if (calls.length >= MAX_CALLS) break;
      const tool = names.get(b.tool_use_id);
      calls.push({ id: b.tool_use_id, at, ...(tool !== undefined ? { tool } : {}) });
    }
  }
  return calls;
}
