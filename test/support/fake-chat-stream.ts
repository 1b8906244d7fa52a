import type { ServerResponse } from "node:http";
import { eventStream, sendJson, startFakeModel } from "./fake-model.js";
import type { FakeModel, ModelRequest, ModelScript } from "./fake-model.js";

/**
 * A scripted fake of the OpenAI Chat Completions API that streams (`POST /v1/chat/completions` with
 * `stream: true`: SSE `chat.completion.chunk`s, tool calls in `delta.tool_calls`, then a usage-only chunk and
 * `[DONE]`), for driving GitHub Copilot CLI offline (`COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=<url>`,
 * see copilot-cli.ts). Requests that offer tools are the conversation's turns and follow the script; any other
 * chat request gets "ok". Every token the fake sends is added up in `sent`, for exact-count assertions.
 */

/** One message of a chat request (only the fields tests read). */
export interface ChatMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  [key: string]: unknown;
}

/** The JSON body of a chat request. */
export interface ChatStreamBody {
  model: string;
  messages: ChatMessage[];
  tools?: { type: string; function: { name: string; parameters?: unknown } }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** A request the fake received. */
export type ChatStreamRequest = ModelRequest<ChatStreamBody>;

/** What the fake model answers on one request: text, tool calls, or an API error. */
export interface ChatReply {
  text?: string;
  toolCalls?: { name: string; arguments: unknown }[];
  /** @default `{ prompt_tokens: 100, completion_tokens: 7 }` */
  usage?: { prompt_tokens: number; completion_tokens: number };
  error?: { status: number; type: string; message: string };
}

/** The running fake: `url` ends in `/v1`; `sent` is every token its replies reported, so far. */
export type FakeChatStream = FakeModel<ChatStreamRequest> & { readonly sent: { tokens: number } };

/** A `bash` call as Copilot CLI's tool takes it. */
export function bashCall(command: string, usage?: ChatReply["usage"]): ChatReply {
  return {
    toolCalls: [{ name: "bash", arguments: { command, description: "run it" } }],
    ...(usage ? { usage } : {}),
  };
}

/** Every text the model was shown in a request: messages' content, tool results included. */
export function textsOf(request: ChatStreamRequest): string[] {
  return (request.body?.messages ?? []).flatMap((m) =>
    typeof m.content === "string"
      ? [m.content]
      : Array.isArray(m.content)
        ? m.content.flatMap((p) => (typeof p.text === "string" ? [p.text] : []))
        : [],
  );
}

/** The results of tool calls in a request, in order. */
export function toolResults(request: ChatStreamRequest): string[] {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeChatStream(
  script: ModelScript<ChatStreamRequest, ChatReply>,
  options: { log?: (line: string) => void } = {},
): Promise<FakeChatStream> {
  const sent = { tokens: 0 };
  let count = 0;
  const fake = await startFakeModel<ChatStreamBody, object, ChatReply>({
    script,
    log: options.log,
    read: ({ method, pathname, json }) => {
      const body =
        method === "POST" && pathname === "/v1/chat/completions" && isChat(json) ? json : undefined;
      return { body, main: Array.isArray(body?.tools) && body.tools.length > 0, extra: {} };
    },
    summary: (body) =>
      `model=${body.model} messages=${body.messages.length} tools=${body.tools?.length ?? 0}`,
    sideReply: () => ({ text: "ok" }),
    answer: (res, _request, body, reply) => {
      if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error);
      const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 7 };
      sent.tokens += usage.prompt_tokens + usage.completion_tokens;
      sendChunks(res, `chatcmpl_fake_${++count}`, body, reply, usage);
    },
    answerOther: (res, { method, pathname }) =>
      sendError(res, 404, { type: "not_found", message: `fake chat API: no ${method} ${pathname}` }),
    scriptFailed: (res, message) => sendError(res, 400, { type: "invalid_request_error", message }),
  });
  return { ...fake, url: `${fake.url}/v1`, sent };
}

function sendChunks(
  res: ServerResponse,
  id: string,
  body: ChatStreamBody,
  reply: ChatReply,
  usage: { prompt_tokens: number; completion_tokens: number },
): void {
  const base = { id, object: "chat.completion.chunk", created: 1_767_225_600, model: body.model };
  const totals = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  if (body.stream !== true) {
    const calls = (reply.toolCalls ?? []).map((c, i) => toolCall(id, c, i));
    sendJson(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: reply.text ?? "",
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
          },
          finish_reason: calls.length > 0 ? "tool_calls" : "stop",
        },
      ],
      usage: totals,
    });
    return;
  }
  const write = eventStream(res);
  const chunk = (delta: object, finish: string | null) =>
    write({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const calls = reply.toolCalls ?? [];
  if (reply.text !== undefined || calls.length === 0)
    chunk({ role: "assistant", content: reply.text ?? "" }, null);
  calls.forEach((c, i) =>
    chunk({ role: "assistant", tool_calls: [{ index: i, ...toolCall(id, c, i) }] }, null),
  );
  chunk({}, calls.length > 0 ? "tool_calls" : "stop");
  write({ ...base, choices: [], usage: totals });
  res.write("data: [DONE]\n\n");
  res.end();
}

function toolCall(id: string, call: { name: string; arguments: unknown }, i: number) {
  const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
  return { id: `call_${id}_${i}`, type: "function", function: { name: call.name, arguments: args } };
}

function sendError(res: ServerResponse, status: number, error: { type: string; message: string }): void {
  sendJson(res, status, { error: { type: error.type, message: error.message, code: null, param: null } });
}

function isChat(json: unknown): json is ChatStreamBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { messages?: unknown }).messages) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}
