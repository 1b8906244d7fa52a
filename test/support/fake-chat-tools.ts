import type { ServerResponse } from "node:http";
import { eventStream, sendJson, startFakeModel } from "./fake-model.js";
import type { FakeModel, ModelRequest, ModelScript } from "./fake-model.js";
import type { ScriptedReply, ScriptedUsage } from "./fake-openai.js";

/**
 * A scripted fake of the OpenAI Chat Completions API with tool calls, streamed or not, on 127.0.0.1: what
 * Qwen Code (`OPENAI_BASE_URL`) and the Copilot CLI under `@github/copilot-sdk` (`provider.baseUrl`) speak.
 * `POST /v1/chat/completions` requests that offer tools are the scripted turns; one without tools (a title,
 * a summary) gets a side reply; any other endpoint a 404. A streamed answer sends the text, then each tool
 * call in one delta, then a finish chunk, then (with `stream_options.include_usage`, or always when
 * `alwaysUsage`) a usage-only chunk, as the API does. Every request and every usage sent is recorded.
 */

/** One message of a chat request (only the fields tests read). */
export interface ChatMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** The JSON body of a `POST /v1/chat/completions` request. */
export interface ChatToolsBody {
  model: string;
  messages: ChatMessage[];
  tools?: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** A request the fake received. */
export type ChatToolsRequest = ModelRequest<ChatToolsBody>;

/** The usage one answer reported, as the API's `usage` object. */
export interface ChatUsageSent {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** The fake, with the usage of every answer it sent (side answers included). */
export interface FakeChatTools extends FakeModel<ChatToolsRequest> {
  readonly usageSent: ChatUsageSent[];
}

const DEFAULT_USAGE: ScriptedUsage = { input_tokens: 10, output_tokens: 5 };
const CREATED = 1_767_225_600;

/** Starts the fake on a free port of 127.0.0.1; `url` ends in `/v1`. */
export async function startFakeChatTools(
  script: ModelScript<ChatToolsRequest, ScriptedReply>,
  options: { log?: (line: string) => void; alwaysUsage?: boolean } = {},
): Promise<FakeChatTools> {
  let count = 0;
  const usageSent: ChatUsageSent[] = [];
  const fake = await startFakeModel<ChatToolsBody, object, ScriptedReply>({
    script,
    log: options.log,
    read: ({ method, pathname, json }) => {
      const body =
        method === "POST" && pathname.endsWith("/chat/completions") && isBody(json) ? json : undefined;
      return { body, main: Array.isArray(body?.tools) && body.tools.length > 0, extra: {} };
    },
    summary: (body) =>
      `model=${body.model} messages=${body.messages.length} tools=${body.tools?.length ?? 0}`,
    sideReply: () => ({ text: "ok", usage: { input_tokens: 3, output_tokens: 1 } }),
    answer: (res, request, body, reply) => {
      if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error);
      const id = `chatcmpl_fake_${++count}`;
      const u = { ...DEFAULT_USAGE, ...reply.usage };
      const usage: ChatUsageSent = {
        prompt_tokens: u.input_tokens,
        completion_tokens: u.output_tokens,
        total_tokens: u.input_tokens + u.output_tokens,
        prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      };
      const calls = (reply.functionCalls ?? []).map((call, i) => ({
        id: call.callId ?? `call_fake_${request.turn ?? "side"}_${count}_${i}`,
        type: "function",
        function: {
          name: call.name,
          arguments:
            typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
        },
      }));
      const finish = calls.length > 0 ? "tool_calls" : "stop";
      if (body.stream !== true) {
        usageSent.push(usage);
        const message = {
          role: "assistant",
          content: reply.text ?? null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        };
        sendJson(res, 200, {
          id,
          object: "chat.completion",
          created: CREATED,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        });
        return;
      }
      const withUsage = options.alwaysUsage === true || body.stream_options?.include_usage === true;
      if (withUsage) usageSent.push(usage);
      sendStream(res, {
        id,
        model: body.model,
        text: reply.text,
        calls,
        finish,
        usage: withUsage ? usage : null,
      });
    },
    answerOther: (res, { method, pathname }) =>
      sendError(res, 404, { type: "not_found", message: `fake chat API: no ${method} ${pathname}` }),
    scriptFailed: (res, message) => sendError(res, 400, { type: "invalid_request_error", message }),
  });
  return { ...fake, url: `${fake.url}/v1`, usageSent };
}

function sendStream(
  res: ServerResponse,
  a: {
    id: string;
    model: string;
    text: string | undefined;
    calls: { id: string; type: string; function: { name: string; arguments: string } }[];
    finish: string;
    usage: ChatUsageSent | null;
  },
): void {
  const write = eventStream(res);
  const chunk = (delta: object, finish: string | null, extra: object = {}) =>
    write({
      id: a.id,
      object: "chat.completion.chunk",
      created: CREATED,
      model: a.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
  chunk({ role: "assistant", content: "" }, null);
  if (a.text !== undefined && a.text !== "") chunk({ content: a.text }, null);
  a.calls.forEach((call, index) => chunk({ tool_calls: [{ index, ...call }] }, null));
  chunk({}, a.finish);
  if (a.usage !== null)
    write({
      id: a.id,
      object: "chat.completion.chunk",
      created: CREATED,
      model: a.model,
      choices: [],
      usage: a.usage,
    });
  res.write("data: [DONE]\n\n");
  res.end();
}

function sendError(res: ServerResponse, status: number, error: { type: string; message: string }): void {
  sendJson(res, status, { error: { type: error.type, message: error.message, code: null, param: null } });
}

function isBody(json: unknown): json is ChatToolsBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { messages?: unknown }).messages) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}

/** The `tool` messages after the last assistant message with tool calls: the answers to its calls. */
export function lastToolResults(request: ChatToolsRequest): { callId: string; text: string }[] {
  const messages = request.body?.messages ?? [];
  const last = messages.findLastIndex((m) => m.role === "assistant" && (m.tool_calls ?? []).length > 0);
  if (last < 0) return [];
  return messages
    .slice(last + 1)
    .filter((m) => m.role === "tool")
    .map((m) => ({ callId: m.tool_call_id ?? "", text: textOf(m.content) }));
}

/** The text of a message's content. */
export function textOf(content: ChatMessage["content"]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return content.map((p) => p.text ?? "").join("");
}

/** A tool call of the fake model. */
export function toolCall(name: string, args: unknown, usage?: ScriptedUsage): ScriptedReply {
  return { functionCalls: [{ name, arguments: args }], ...(usage !== undefined ? { usage } : {}) };
}
