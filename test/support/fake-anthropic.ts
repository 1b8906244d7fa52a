import type { ServerResponse } from "node:http";
import { eventStream, sendJson, startFakeModel } from "./fake-model.js";
import type { FakeModel, ModelRequest, ModelScript } from "./fake-model.js";

/**
 * A scripted fake of the Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI
 * offline (`ANTHROPIC_BASE_URL=<url>`). Every request is recorded. Requests that carry tools are the
 * "main" conversation turns and follow the script; anything else (side requests such as a title or a
 * quota check, `count_tokens`, the `HEAD /api/hello` probe, a model list) gets a short harmless answer.
 *
 * What Claude Code 2.1.330 was seen to send: `POST /v1/messages?beta=true` with `stream: true`, the
 * built-in tools in `tools`, and `HEAD /api/hello` at start unless
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`. The conversation in `messages` may contain
 * `role: "system"` messages (environment notes, hook feedback) besides `user` and `assistant`.
 */

/** One content block of a message as the Messages API carries it (only the fields tests read). */
export interface ApiContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | ApiContentBlock[];
  is_error?: boolean;
}

/** One message of the conversation; Claude Code also sends `system` messages inside `messages`. */
export interface ApiMessage {
  role: "user" | "assistant" | "system";
  content: string | ApiContentBlock[];
}

/** The JSON body of a `POST /v1/messages` request. */
export interface MessagesRequestBody {
  model: string;
  messages: ApiMessage[];
  system?: string | ApiContentBlock[];
  tools?: { name: string; [key: string]: unknown }[];
  max_tokens?: number;
  stream?: boolean;
  [key: string]: unknown;
}

/** A request the fake received; `body` is the Messages request when this was `POST /v1/messages`. */
export type RecordedRequest = ModelRequest<MessagesRequestBody>;

/** Token usage reported for one reply (the Messages API's field names). */
export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** A tool call the fake model makes. */
export interface ScriptedToolUse {
  name: string;
  input: unknown;
  /** @default `toolu_fake_<turn>_<index>` */
  id?: string;
}

/** What the fake model answers on one turn: text first, then tool calls, or an API error. */
export interface ScriptedReply {
  text?: string;
  toolUses?: ScriptedToolUse[];
  /** @default `{ input_tokens: 10, output_tokens: 5 }` */
  usage?: ScriptedUsage;
  /** @default `"tool_use"` when there are tool calls, else `"end_turn"` */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";
  /**
   * Answer with an HTTP error instead (Anthropic error JSON). Claude Code retries 408/409/429/5xx
   * with backoff, so prefer a 4xx such as 400 for a quick, deterministic failure.
   */
  error?: { status: number; type: string; message: string };
}

/** The script: replies by main turn (turns past the end answer "done"), or a function of the request. */
export type Script = ModelScript<RecordedRequest, ScriptedReply>;

export interface FakeAnthropicOptions {
  /**
   * Which Messages requests follow the script.
   * @default requests whose body has a non-empty `tools` array
   */
  isMain?: (body: MessagesRequestBody) => boolean;
  /**
   * The reply to side requests.
   * @default `{ text: "ok" }`
   */
  sideReply?: (request: RecordedRequest) => ScriptedReply;
  /** Called with one line per request, for debugging. */
  log?: (line: string) => void;
}

/** The fake; `url` is the value for `ANTHROPIC_BASE_URL`, and a script that throws ends Claude Code's run. */
export type FakeAnthropic = FakeModel<RecordedRequest>;

const DEFAULT_USAGE: ScriptedUsage = { input_tokens: 10, output_tokens: 5 };

/** Starts the fake on a free port of 127.0.0.1. */
export function startFakeAnthropic(
  script: Script,
  options: FakeAnthropicOptions = {},
): Promise<FakeAnthropic> {
  const isMain = options.isMain ?? ((body) => Array.isArray(body.tools) && body.tools.length > 0);
  let messageCount = 0;
  return startFakeModel<MessagesRequestBody, object, ScriptedReply>({
    script,
    log: options.log,
    read: ({ method, pathname, json }) => {
      const body =
        method === "POST" && pathname === "/v1/messages" && isMessagesBody(json) ? json : undefined;
      return { body, main: body !== undefined && isMain(body), extra: {} };
    },
    summary: (body) => `model=${body.model} max_tokens=${body.max_tokens} tools=${body.tools?.length ?? 0}`,
    sideReply: options.sideReply ?? (() => ({ text: "ok" })),
    answer: (res, request, body, reply) => {
      const id = `msg_fake_${++messageCount}`;
      if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error);
      const message = buildMessage(id, body.model, reply, request.turn ?? 0);
      if (body.stream === true) sendStream(res, id, message);
      else sendJson(res, 200, message, { "request-id": `req_fake_${messageCount}` });
    },
    answerOther,
    scriptFailed: (res, message) => sendError(res, 400, { type: "invalid_request_error", message }),
  });
}

/** A tool result the model receives: its text (blocks joined by newlines) and whether it is an error. */
export interface ToolResult {
  toolUseId: string;
  text: string;
  isError: boolean;
}

/** Every `tool_result` block of a request's conversation, in order. */
export function toolResults(request: RecordedRequest): ToolResult[] {
  return (request.body?.messages ?? []).flatMap(toolResultsOf);
}

/**
 * The `tool_result` blocks that are new in this request: those after the last assistant message,
 * i.e. the answers to the tool calls of the previous turn. A PreToolUse deny arrives here as
 * `{ text: "PreToolUse:Bash hook error: <reason>", isError: true }`.
 */
export function lastToolResults(request: RecordedRequest): ToolResult[] {
  return newMessages(request).flatMap(toolResultsOf);
}

/**
 * The user text that is new in this request (after the last assistant message), one entry per text
 * block or string message; tool results are not included. A Stop hook's block arrives here as
 * `Stop hook feedback:\n<reason>`.
 */
export function lastUserTexts(request: RecordedRequest): string[] {
  return newMessages(request)
    .filter((m) => m.role === "user")
    .flatMap(textsOf);
}

/** The text of `system` messages that are new in this request (Claude Code's notes to the model). */
export function lastSystemTexts(request: RecordedRequest): string[] {
  return newMessages(request)
    .filter((m) => m.role === "system")
    .flatMap(textsOf);
}

/** Every user text of a request's conversation (string messages and text blocks), in order. */
export function userTexts(request: RecordedRequest): string[] {
  return (request.body?.messages ?? []).filter((m) => m.role === "user").flatMap(textsOf);
}

function newMessages(request: RecordedRequest): ApiMessage[] {
  const messages = request.body?.messages ?? [];
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === "assistant") lastAssistant = i;
  });
  return messages.slice(lastAssistant + 1);
}

function textsOf(message: ApiMessage): string[] {
  if (typeof message.content === "string") return [message.content];
  return message.content.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []));
}

function toolResultsOf(message: ApiMessage): ToolResult[] {
  if (typeof message.content === "string") return [];
  return message.content
    .filter((b) => b.type === "tool_result")
    .map((b) => ({
      toolUseId: b.tool_use_id ?? "",
      text: blockText(b.content),
      isError: b.is_error === true,
    }));
}

function blockText(content: string | ApiContentBlock[] | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((b) => (typeof b.text === "string" ? [b.text] : [])).join("\n");
}

interface BuiltMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ApiContentBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: ScriptedUsage;
}

function buildMessage(id: string, model: string, reply: ScriptedReply, turn: number): BuiltMessage {
  const content: ApiContentBlock[] = [];
  if (reply.text !== undefined) content.push({ type: "text", text: reply.text });
  (reply.toolUses ?? []).forEach((use, i) =>
    content.push({
      type: "tool_use",
      id: use.id ?? `toolu_fake_${turn}_${i}`,
      name: use.name,
      input: use.input,
    }),
  );
  if (content.length === 0) content.push({ type: "text", text: "" });
  const hasTools = (reply.toolUses ?? []).length > 0;
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: reply.stopReason ?? (hasTools ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: { ...DEFAULT_USAGE, ...reply.usage },
  };
}

/** Streams a message as the Messages API does (SSE), with the final usage on `message_delta`. */
function sendStream(res: ServerResponse, id: string, message: BuiltMessage): void {
  // Claude Code records the request id as `requestId` on the transcript's assistant entries.
  const write = eventStream(res, { "request-id": `req_${id}` });
  const send = (type: string, data: Record<string, unknown>) => write({ type, ...data }, type);
  const { usage } = message;
  send("message_start", {
    message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
  });
  send("ping", {});
  message.content.forEach((block, index) => {
    if (block.type === "tool_use") {
      send("content_block_start", { index, content_block: { ...block, input: {} } });
      // Two fragments, as a real stream splits input JSON; Claude Code must join them.
      const json = JSON.stringify(block.input ?? {});
      const cut = Math.floor(json.length / 2);
      for (const partial_json of [json.slice(0, cut), json.slice(cut)]) {
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
      }
    } else {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: block.text ?? "" } });
    }
    send("content_block_stop", { index });
  });
  send("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage });
  send("message_stop", {});
  res.end();
}

function answerOther(res: ServerResponse, { method, pathname, json }: RecordedRequest): void {
  if (method === "HEAD" || (method === "GET" && (pathname === "/" || pathname === "/api/hello"))) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(method === "HEAD" ? undefined : "{}");
    return;
  }
  if (method === "POST" && pathname === "/v1/messages/count_tokens") {
    // A rough estimate, as the real endpoint gives: about four characters per token.
    sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(JSON.stringify(json ?? "").length / 4)) });
    return;
  }
  if (method === "GET" && pathname.startsWith("/v1/models")) {
    const model = {
      type: "model",
      id: "claude-fake",
      display_name: "Fake",
      created_at: "2026-01-01T00:00:00Z",
    };
    const id = pathname.slice("/v1/models/".length);
    if (id !== "") sendJson(res, 200, { ...model, id });
    else sendJson(res, 200, { data: [model], has_more: false, first_id: model.id, last_id: model.id });
    return;
  }
  sendError(res, 404, { type: "not_found_error", message: `fake Anthropic API: no ${method} ${pathname}` });
}

function sendError(res: ServerResponse, status: number, error: { type: string; message: string }): void {
  sendJson(res, status, { type: "error", error: { type: error.type, message: error.message } });
}

function isMessagesBody(json: unknown): json is MessagesRequestBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { messages?: unknown }).messages) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}
