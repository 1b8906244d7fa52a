import type { ServerResponse } from "node:http";
import { eventStream, sendJson, startFakeModel } from "./fake-model.js";
import type { FakeModel, ModelRequest, ModelScript } from "./fake-model.js";

/**
 * A scripted fake of the OpenAI Responses API on 127.0.0.1, for driving the real Codex CLI offline
 * (a `model_providers` entry with `base_url = "<url>/v1"` and `wire_api = "responses"`, see
 * codex-cli.ts). Every request is recorded. `POST /v1/responses` requests that carry tools are the
 * conversation turns and follow the script; any other endpoint gets a 404.
 *
 * What Codex CLI 0.169.0 was seen to send: `POST /v1/responses` with `stream: true`, `store: false`,
 * the whole conversation in `input` every time (developer and user `message` items, then the
 * `function_call` / `function_call_output` items of earlier tool calls), and tools such as
 * `exec_command` (arguments `{"cmd": "<shell command>"}`), `write_stdin`, `view_image`. A turn ends
 * when a response has no function call. A hook's note to the model (`additionalContext`) arrives as a
 * `developer` message; a PreToolUse deny arrives as the call's `function_call_output`:
 * `Command blocked by PreToolUse hook: <reason>. Command: <cmd>`.
 */

/** One part of an item's content, e.g. `{ type: "input_text", text }`. */
export interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** One item of a Responses API `input` or `output` (only the fields tests read). */
export interface ResponseItem {
  type: string;
  id?: string;
  role?: string;
  content?: string | ContentPart[];
  name?: string;
  arguments?: string;
  call_id?: string;
  output?: string | ContentPart[];
  [key: string]: unknown;
}

/** The JSON body of a `POST /v1/responses` request. */
export interface ResponsesRequestBody {
  model: string;
  input: ResponseItem[];
  tools?: { type: string; name?: string; [key: string]: unknown }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** A request the fake received; `body` is the Responses request when this was `POST /v1/responses`. */
export type RecordedRequest = ModelRequest<ResponsesRequestBody>;

/** Token usage reported for one response (the Responses API's field names). */
export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

/** A function (tool) call the fake model makes. */
export interface ScriptedFunctionCall {
  /** The tool's name, e.g. `exec_command`. */
  name: string;
  /** The arguments: an object is sent as its JSON text. */
  arguments: unknown;
  /** @default `call_fake_<turn>_<index>` */
  callId?: string;
}

/** What the fake model answers on one request: text first, then function calls, or an API error. */
export interface ScriptedReply {
  text?: string;
  functionCalls?: ScriptedFunctionCall[];
  /** @default `{ input_tokens: 10, output_tokens: 5 }` */
  usage?: ScriptedUsage;
  /**
   * Answer with an HTTP error instead (OpenAI error JSON). Codex retries 429/5xx with backoff, so
   * prefer a 400 for a quick, deterministic failure.
   */
  error?: { status: number; type: string; message: string };
}

/** The script: replies by main turn (turns past the end answer "done"), or a function of the request. */
export type Script = ModelScript<RecordedRequest, ScriptedReply>;

export interface FakeOpenAiOptions {
  /** Called with one line per request, for debugging. */
  log?: (line: string) => void;
}

/** The fake; `url` is `http://127.0.0.1:<port>/v1`, the provider's `base_url`. */
export type FakeOpenAi = FakeModel<RecordedRequest>;

const DEFAULT_USAGE: ScriptedUsage = { input_tokens: 10, output_tokens: 5 };
/** Every response's `created_at` (epoch seconds), which the AI SDK requires. */
const CREATED_AT = 1_767_225_600;

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeOpenAi(script: Script, options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  let responseCount = 0;
  const fake = await startFakeModel<ResponsesRequestBody, object, ScriptedReply>({
    script,
    log: options.log,
    read: ({ method, pathname, json }) => {
      const body =
        method === "POST" && pathname === "/v1/responses" && isResponsesBody(json) ? json : undefined;
      return { body, main: Array.isArray(body?.tools) && body.tools.length > 0, extra: {} };
    },
    summary: (body) => `model=${body.model} input=${body.input.length} tools=${body.tools?.length ?? 0}`,
    sideReply: () => ({ text: "ok" }),
    answer: (res, request, body, reply) => {
      if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error);
      const id = `resp_fake_${++responseCount}`;
      const output = buildOutput(reply, request.turn ?? 0, responseCount);
      const usage = usageOf(reply.usage);
      // The API streams only when asked to: the AI SDK's generateText leaves `stream` out.
      if (body.stream !== true) {
        sendJson(res, 200, {
          id,
          object: "response",
          created_at: CREATED_AT,
          status: "completed",
          model: body.model,
          output,
          usage,
        });
      } else {
        sendStream(res, id, body.model, output, usage);
      }
    },
    answerOther: (res, { method, pathname }) =>
      sendError(res, 404, { type: "not_found", message: `fake OpenAI API: no ${method} ${pathname}` }),
    scriptFailed: (res, message) => sendError(res, 400, { type: "invalid_request_error", message }),
  });
  return { ...fake, url: `${fake.url}/v1` };
}

/** A shell call as Codex's `exec_command` tool takes it. */
export function execCommand(cmd: string, usage?: ScriptedUsage): ScriptedReply {
  return { functionCalls: [{ name: "exec_command", arguments: { cmd } }], ...(usage ? { usage } : {}) };
}

/** A tool result the model receives: the call it answers and its text. */
export interface FunctionCallOutput {
  callId: string;
  text: string;
}

/** Every `function_call_output` item of a request's input, in order. */
export function functionCallOutputs(request: RecordedRequest): FunctionCallOutput[] {
  return (request.body?.input ?? []).flatMap(outputOf);
}

/**
 * The `function_call_output` items that are new in this request: those after the last `function_call`,
 * i.e. the answers to the calls of the previous response. A PreToolUse deny arrives here as
 * `Command blocked by PreToolUse hook: <reason>. Command: <cmd>`.
 */
export function lastFunctionCallOutputs(request: RecordedRequest): FunctionCallOutput[] {
  const input = request.body?.input ?? [];
  let lastCall = -1;
  input.forEach((item, i) => {
    if (item.type === "function_call") lastCall = i;
  });
  return lastCall < 0 ? [] : input.slice(lastCall + 1).flatMap(outputOf);
}

/** The text of every `developer` message of a request's input (Codex's instructions and hook notes). */
export function developerTexts(request: RecordedRequest): string[] {
  return (request.body?.input ?? [])
    .filter((item) => item.type === "message" && item.role === "developer")
    .flatMap((item) => textsOf(item.content));
}

function outputOf(item: ResponseItem): FunctionCallOutput[] {
  if (item.type !== "function_call_output") return [];
  return [{ callId: item.call_id ?? "", text: textsOf(item.output).join("\n") }];
}

function textsOf(content: ResponseItem["content"]): string[] {
  if (content === undefined) return [];
  if (typeof content === "string") return [content];
  return content.flatMap((part) => (typeof part.text === "string" ? [part.text] : []));
}

function buildOutput(reply: ScriptedReply, turn: number, response: number): ResponseItem[] {
  const output: ResponseItem[] = [];
  if (reply.text !== undefined || (reply.functionCalls ?? []).length === 0) {
    output.push({
      type: "message",
      id: `msg_fake_${response}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply.text ?? "", annotations: [] }],
    });
  }
  (reply.functionCalls ?? []).forEach((call, i) =>
    output.push({
      type: "function_call",
      id: `fc_fake_${response}_${i}`,
      call_id: call.callId ?? `call_fake_${turn}_${i}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
      status: "completed",
    }),
  );
  return output;
}

function usageOf(usage: ScriptedUsage | undefined): Record<string, unknown> {
  const u = { ...DEFAULT_USAGE, ...usage };
  return {
    input_tokens: u.input_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: u.input_tokens + u.output_tokens,
  };
}

/** Streams a response as the Responses API does (SSE), with the usage on `response.completed`. */
function sendStream(
  res: ServerResponse,
  id: string,
  model: string,
  output: ResponseItem[],
  usage: Record<string, unknown>,
): void {
  const write = eventStream(res);
  let sequence = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    write({ type, sequence_number: sequence++, ...data }, type);
  const response = {
    id,
    object: "response",
    created_at: CREATED_AT,
    model,
    status: "in_progress",
    output: [],
  };
  send("response.created", { response });
  output.forEach((item, output_index) => {
    if (item.type === "message") {
      send("response.output_item.added", {
        output_index,
        item: { ...item, content: [], status: "in_progress" },
      });
      const text = textsOf(item.content).join("");
      send("response.output_text.delta", { output_index, item_id: item.id, content_index: 0, delta: text });
    } else {
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress" } });
    }
    send("response.output_item.done", { output_index, item });
  });
  send("response.completed", { response: { ...response, status: "completed", output, usage } });
  res.end();
}

function sendError(res: ServerResponse, status: number, error: { type: string; message: string }): void {
  sendJson(res, status, { error: { type: error.type, message: error.message, code: null, param: null } });
}

function isResponsesBody(json: unknown): json is ResponsesRequestBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { input?: unknown }).input) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}

/** The JSON body of a `POST /v1/chat/completions` request. */
export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string | ContentPart[] | null }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** A request the chat completions fake received. */
export type ChatRecordedRequest = ModelRequest<ChatRequestBody>;

/**
 * A scripted fake of the OpenAI Chat Completions API (non-streaming `POST /v1/chat/completions`) on
 * 127.0.0.1, for clients that speak it (reins' oracle). Every chat request follows the script; `url` ends
 * in `/v1`, as for the Responses fake.
 */
export async function startFakeChatCompletions(
  script: ModelScript<ChatRecordedRequest, ScriptedReply>,
  options: FakeOpenAiOptions = {},
): Promise<FakeModel<ChatRecordedRequest>> {
  let count = 0;
  const fake = await startFakeModel<ChatRequestBody, object, ScriptedReply>({
    script,
    log: options.log,
    read: ({ method, pathname, json }) => {
      const body =
        method === "POST" && pathname === "/v1/chat/completions" && isChatBody(json) ? json : undefined;
      return { body, main: body !== undefined, extra: {} };
    },
    summary: (body) => `model=${body.model} messages=${body.messages.length}`,
    sideReply: () => ({ text: "ok" }),
    answer: (res, _request, body, reply) => {
      if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error);
      const u = { ...DEFAULT_USAGE, ...reply.usage };
      sendJson(res, 200, {
        id: `chatcmpl_fake_${++count}`,
        object: "chat.completion",
        created: 1_767_225_600,
        model: body.model,
        choices: [
          { index: 0, message: { role: "assistant", content: reply.text ?? "" }, finish_reason: "stop" },
        ],
        usage: {
          prompt_tokens: u.input_tokens,
          completion_tokens: u.output_tokens,
          total_tokens: u.input_tokens + u.output_tokens,
        },
      });
    },
    answerOther: (res, { method, pathname }) =>
      sendError(res, 404, { type: "not_found", message: `fake OpenAI API: no ${method} ${pathname}` }),
    scriptFailed: (res, message) => sendError(res, 400, { type: "invalid_request_error", message }),
  });
  return { ...fake, url: `${fake.url}/v1` };
}

function isChatBody(json: unknown): json is ChatRequestBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { messages?: unknown }).messages) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}
