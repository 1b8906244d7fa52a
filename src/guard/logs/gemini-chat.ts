/** Reads a Gemini CLI chat recording back as the hook calls Gemini CLI made. */
import { geminiTokens } from "../hooks/gemini.js";
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import { addLeftoverUsage, timeOf, type LoggedCall, type LoggedRun } from "./run.js";
import { rec, str, type Row } from "./values.js";

/**
 * Gemini CLI chat recordings (`~/.gemini/tmp/<project hash>/chats/session-*.json`, written by its
 * ChatRecordingService): `{ sessionId, projectHash, startTime, lastUpdated, messages }`, where a message is
 * `{ id, timestamp, type: user|gemini|info|error|warning, content }` and a `gemini` message adds `toolCalls`
 * (`{ id, name, args, result, status, timestamp, resultDisplay? }`, `result` being the function response
 * parts sent back to the model), `tokens` (`{ input, output, cached, thoughts, tool, total }`) and `model`.
 * Newer versions write the same record as JSON Lines (`session-*.jsonl`): a metadata line, then a line per
 * message write (a message rewritten keeps its place), `{ $set }` metadata updates and `{ $rewindTo: id }`.
 * Read back as the hook calls Gemini CLI makes: SessionStart, BeforeAgent per prompt, BeforeTool and
 * AfterTool per tool call, AfterAgent when a turn ends; each model response's tokens arrive as usage on the
 * next call (the recording keeps no per-chunk AfterModel data). The recording holds no working directory, so
 * `cwd` is left out.
 */

const isHeader = (r: Row) => typeof r.sessionId === "string" && typeof r.projectHash === "string";

/** Whether a parsed JSON value, or the rows of a JSON Lines file, is a Gemini CLI chat recording. */
export function isGeminiChat(data: unknown): boolean {
  if (Array.isArray(data)) return data.some((r) => isHeader(rec(r)));
  const d = rec(data);
  return typeof d.sessionId === "string" && (typeof d.projectHash === "string" || Array.isArray(d.messages));
}

/** The conversation as the recorder last held it: the JSON record, or the JSON Lines writes replayed. */
function conversation(data: unknown): { meta: Row; messages: Row[] } {
  if (!Array.isArray(data)) {
    const d = rec(data);
    return { meta: d, messages: Array.isArray(d.messages) ? d.messages.map(rec) : [] };
  }
  let meta: Row = {};
  // A Map keeps a rewritten message at its first place, as the recorder's own loader does.
  let messages = new Map<string, Row>();
  for (const row of data.map(rec)) {
    const rewind = str(row.$rewindTo);
    if (rewind !== undefined) {
      const ids = [...messages.keys()];
      const from = ids.indexOf(rewind);
      for (const id of from < 0 ? ids : ids.slice(from)) messages.delete(id);
    } else if (typeof row.id === "string") {
      messages.set(row.id, row);
    } else if (Object.keys(rec(row.$set)).length > 0) {
      const set = rec(row.$set);
      meta = { ...meta, ...set };
      // A history sync rewrites the whole list; later message lines still add to it.
      if (Array.isArray(set.messages) && set.messages.length > 0)
        messages = new Map(set.messages.map(rec).map((m) => [String(m.id), m]));
    } else if (isHeader(row)) {
      meta = { ...meta, ...row };
    }
  }
  return { meta, messages: [...messages.values()] };
}

/** The text of a message's content: a string, a part, or a list of parts (function calls and data left out). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  const parts = Array.isArray(content) ? content : [content];
  return parts.map((p) => (typeof p === "string" ? p : (str(rec(p).text) ?? ""))).join("");
}

/** Whether a user message only carries tool results back to the model (not a prompt). */
function onlyToolResults(content: unknown): boolean {
  return Array.isArray(content) && content.length > 0 && content.every((p) => "functionResponse" in rec(p));
}

/**
 * The `tool_response` Gemini CLI hands AfterTool, rebuilt from the function response parts the recording
 * keeps: `llmContent` is the response's `output` (or its `error`) and any text parts; `error` is set when
 * the call errored or was cancelled.
 */
function toolResponse(call: Row): Row {
  const texts: string[] = [];
  let errorText: string | undefined;
  for (const part of Array.isArray(call.result) ? call.result : [call.result]) {
    if (typeof part === "string") texts.push(part);
    const response = rec(rec(rec(part).functionResponse).response);
    const output = response.output ?? response.content;
    if (output !== undefined) texts.push(typeof output === "string" ? output : JSON.stringify(output));
    if (response.error !== undefined) errorText = str(response.error) ?? JSON.stringify(response.error);
    const text = str(rec(part).text);
    if (text !== undefined) texts.push(text);
  }
  const failed = call.status === "error" || call.status === "cancelled";
  const llmContent = texts.length > 0 ? texts.join("\n") : (errorText ?? "");
  return {
    llmContent,
    returnDisplay: call.resultDisplay ?? llmContent,
    ...(failed ? { error: { message: errorText ?? `tool call ${String(call.status)}` } } : {}),
  };
}

/** A model response's tokens (Gemini's counts: the prompt includes the cached tokens, thinking is apart). */
function usageOf(message: Row): UsageRecord | null {
  const t = rec(message.tokens);
  if (Object.keys(t).length === 0) return null;
  const model = str(message.model);
  return {
    id: `gemini:${String(message.id)}`,
    // Counted as the live AfterModel reading counts them.
    ...geminiTokens({
      prompt: t.input,
      cached: t.cached,
      candidates: t.output,
      thoughts: t.thoughts,
      total: t.total,
      toolUsePrompt: t.tool,
    }),
    ...(model !== undefined && model !== "" ? { model } : {}),
  };
}

const TALK = new Set(["user", "gemini"]);
const DONE = new Set(["success", "error", "cancelled"]);

/** Reads a Gemini CLI chat recording (the parsed JSON record, or the rows of its JSON Lines form). */
export function readGeminiChat(data: unknown, source: string, fallbackId: string): LoggedRun {
  const { meta, messages } = conversation(data);
  const id = str(meta.sessionId) ?? fallbackId;
  let clock = timeOf(meta.startTime, 0);
  const calls: LoggedCall[] = [];
  let pending: UsageRecord[] = [];
  const push = (when: unknown, hook: string, fields: Row) => {
    clock = Math.max(clock, timeOf(when, clock));
    const input = {
      session_id: id,
      transcript_path: source,
      hook_event_name: hook,
      // A time out of Date's range (a corrupt record) leaves the field out rather than throwing.
      ...(Math.abs(clock) <= 8.64e15 ? { timestamp: new Date(clock).toISOString() } : {}),
      ...fields,
    };
    calls.push(pending.length > 0 ? { at: clock, input, usage: pending } : { at: clock, input });
    pending = [];
  };

  push(meta.startTime, "SessionStart", { source: "startup" });
  const talk = messages.filter((m) => TALK.has(String(m.type)));
  let prompt = "";
  for (const [i, message] of talk.entries()) {
    if (message.type === "user") {
      if (onlyToolResults(message.content)) continue;
      prompt = textOf(message.content);
      push(message.timestamp, "BeforeAgent", { prompt });
      continue;
    }
    const usage = usageOf(message);
    if (usage !== null) pending.push(usage);
    const toolCalls = Array.isArray(message.toolCalls) ? message.toolCalls.map(rec) : [];
    for (const call of toolCalls) {
      const tool = { tool_name: str(call.name) ?? "unknown", tool_input: rec(call.args) };
      // The call's own timestamp is when it finished; it was requested when the model's message came.
      const started = Math.min(timeOf(message.timestamp, clock), timeOf(call.timestamp, clock));
      push(started, "BeforeTool", tool);
      if (DONE.has(String(call.status)))
        push(call.timestamp, "AfterTool", { ...tool, tool_response: toolResponse(call) });
    }
    // A turn ends with a model message that asks for no tool and is not followed by more of the model's.
    const next = talk[i + 1];
    if (toolCalls.length === 0 && next?.type !== "gemini")
      push(message.timestamp, "AfterAgent", {
        prompt,
        prompt_response: textOf(message.content),
        stop_hook_active: false,
      });
  }
  addLeftoverUsage(calls, pending);
  return { id, agent: "gemini", format: "gemini-chat", source, calls };
}
