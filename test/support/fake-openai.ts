import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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

/** A request the fake received, in arrival order. */
export interface RecordedRequest {
  method: string;
  /** Path with query, e.g. `/v1/responses`. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body, when the body was JSON. */
  json: unknown;
  /** The Responses request, when this was `POST /v1/responses`. */
  body: ResponsesRequestBody | undefined;
  /** `main`: a scripted turn; `side`: another Responses call (no tools); `other`: any other endpoint. */
  kind: "main" | "side" | "other";
  /** For main requests, the 0-based index of the turn in the script. */
  turn: number | undefined;
}

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
export type Script =
  | readonly ScriptedReply[]
  | ((request: RecordedRequest, turn: number) => ScriptedReply | Promise<ScriptedReply>);

export interface FakeOpenAiOptions {
  /** Called with one line per request, for debugging. */
  log?: (line: string) => void;
}

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1`: the provider's `base_url`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Errors thrown by the script (each was answered with HTTP 400). */
  readonly errors: Error[];
  /** The main (scripted) requests, in order. */
  mainRequests(): RecordedRequest[];
  close(): Promise<void>;
}

const DEFAULT_USAGE: ScriptedUsage = { input_tokens: 10, output_tokens: 5 };
const EXHAUSTED: ScriptedReply = { text: "done" };

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeOpenAi(script: Script, options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const requests: RecordedRequest[] = [];
  const errors: Error[] = [];
  let mainTurns = 0;
  let responseCount = 0;

  const replyFor = async (request: RecordedRequest): Promise<ScriptedReply> => {
    if (request.kind !== "main" || request.turn === undefined) return { text: "ok" };
    if (typeof script === "function") return script(request, request.turn);
    return script[request.turn] ?? EXHAUSTED;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      const pathname = path.split("?")[0] ?? path;
      const method = req.method ?? "GET";
      const json = parseJson(rawBody);
      const isResponses = method === "POST" && pathname === "/v1/responses";
      const body = isResponses && isResponsesBody(json) ? json : undefined;
      const kind =
        body === undefined ? "other" : Array.isArray(body.tools) && body.tools.length > 0 ? "main" : "side";
      const request: RecordedRequest = {
        method,
        path,
        headers: req.headers,
        rawBody,
        json,
        body,
        kind,
        turn: kind === "main" ? mainTurns++ : undefined,
      };
      requests.push(request);
      options.log?.(
        `${method} ${path} ${kind}${request.turn === undefined ? "" : ` turn ${request.turn}`}` +
          (body ? ` model=${body.model} input=${body.input.length} tools=${body.tools?.length ?? 0}` : ""),
      );

      if (body === undefined) {
        sendError(res, 404, { type: "not_found", message: `fake OpenAI API: no ${method} ${pathname}` });
        return;
      }
      replyFor(request).then(
        (reply) => {
          if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error);
          const id = `resp_fake_${++responseCount}`;
          const output = buildOutput(reply, request.turn ?? 0, responseCount);
          const usage = usageOf(reply.usage);
          if (body.stream === false) {
            sendJson(res, 200, {
              id,
              object: "response",
              status: "completed",
              model: body.model,
              output,
              usage,
            });
          } else {
            sendStream(res, id, body.model, output, usage);
          }
        },
        (error: unknown) => {
          const err = error instanceof Error ? error : new Error(String(error));
          errors.push(err);
          sendError(res, 400, {
            type: "invalid_request_error",
            message: `fake script failed: ${err.message}`,
          });
        },
      );
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    errors,
    mainRequests: () => requests.filter((r) => r.kind === "main"),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  let sequence = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const response = { id, object: "response", model, status: "in_progress", output: [] };
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

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, error: { type: string; message: string }): void {
  sendJson(res, status, { error: { type: error.type, message: error.message, code: null, param: null } });
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isResponsesBody(json: unknown): json is ResponsesRequestBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { input?: unknown }).input) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}
