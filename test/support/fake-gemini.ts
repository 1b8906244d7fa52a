import type { ServerResponse } from "node:http";
import { eventStream, sendJson, startFakeModel } from "./fake-model.js";
import type { FakeModel, ModelRequest, ModelScript } from "./fake-model.js";

/**
 * A scripted fake of the Gemini API on 127.0.0.1, for driving the real Gemini CLI offline
 * (`GOOGLE_GEMINI_BASE_URL=<url>`, see gemini-cli.ts). Every request is recorded. Streamed
 * `generateContent` requests that carry tools are the conversation turns and follow the script; other
 * `generateContent` calls (Gemini CLI's model router and checks) get a short side reply; any other endpoint
 * gets a 404.
 *
 * What Gemini CLI 0.61.0 was seen to send with `-m <model>`: only `POST
 * /v1beta/models/<model>:streamGenerateContent?alt=sse`, the whole conversation in `contents` every time
 * (the session context, the prompt, then the model's `functionCall` parts and the user's `functionResponse`
 * parts), and tools such as `run_shell_command` (`{ command }`), `read_file`, `write_file`, `replace`.
 * A turn ends when a response has no function call. A `run_shell_command` result reaches the model as
 * `functionResponse.response.output` (`Output: ...`, `Exit Code: N` when it failed); a BeforeTool hook's
 * deny as `functionResponse.response.error`. With the model left at `auto`, a router first asks a small
 * model over non-streamed `:generateContent`.
 */

/** One part of a content: text, a function call, a function response (only the fields tests read). */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response?: Record<string, unknown> };
  [key: string]: unknown;
}

/** One turn of a conversation: `user` (prompts, function responses) or `model`. */
export interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

/** The JSON body of a `generateContent` request. */
export interface GenerateContentBody {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: { functionDeclarations?: { name: string; [key: string]: unknown }[]; [key: string]: unknown }[];
  generationConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A request the fake received; `body` is the request of a `generateContent` call, streamed or not. */
export interface RecordedRequest extends ModelRequest<GenerateContentBody> {
  /** The model named in the path, for `generateContent` calls. */
  model: string | undefined;
}

/** Token usage of one response, as the Gemini API's `usageMetadata` reports it. */
export interface ScriptedUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  /** @default promptTokenCount + candidatesTokenCount + thoughtsTokenCount */
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** The figures of a response's final chunk that Gemini CLI passes on to AfterModel hooks. */
export interface SentUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
}

/** A function (tool) call the fake model makes, e.g. `{ name: "run_shell_command", args: { command } }`. */
export interface ScriptedFunctionCall {
  name: string;
  args: Record<string, unknown>;
}

/**
 * What the fake model answers on one request: text first, then function calls, or an API error. A reply
 * with text is streamed in two chunks; every chunk carries `usageMetadata` (the earlier chunk with
 * partial candidate figures, as the real API does) and only the last one a `finishReason`.
 */
export interface ScriptedReply {
  text?: string;
  functionCalls?: ScriptedFunctionCall[];
  /** @default `{ promptTokenCount: 100, candidatesTokenCount: 10 }` */
  usage?: ScriptedUsage;
  /** Answer with an HTTP error instead (Google API error JSON). Prefer a 400: 429/5xx are retried. */
  error?: { status: number; message: string };
}

/** The script: replies by main turn (turns past the end answer "done"), or a function of the request. */
export type Script = ModelScript<RecordedRequest, ScriptedReply>;

export interface FakeGeminiOptions {
  /**
   * The reply to side requests.
   * @default `{ text: "{}" }` (Gemini CLI's side calls ask for JSON)
   */
  sideReply?: (request: RecordedRequest) => ScriptedReply;
  /** Called with one line per request, for debugging. */
  log?: (line: string) => void;
}

/** The fake; `url` is the value for `GOOGLE_GEMINI_BASE_URL`. */
export interface FakeGemini extends FakeModel<RecordedRequest> {
  /** The usage of every response sent (its final chunk's figures), in order. */
  readonly usageSent: SentUsage[];
}

const DEFAULT_USAGE: ScriptedUsage = { promptTokenCount: 100, candidatesTokenCount: 10 };
const JSON_UTF8 = { "content-type": "application/json; charset=UTF-8" };
const GENERATE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeGemini(script: Script, options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const usageSent: SentUsage[] = [];
  let responseCount = 0;
  const fake = await startFakeModel<GenerateContentBody, { model: string | undefined }, ScriptedReply>({
    script,
    log: options.log,
    read: ({ method, pathname, json }) => {
      const match = method === "POST" ? GENERATE.exec(pathname) : null;
      const body = match !== null && isGenerateBody(json) ? json : undefined;
      const hasTools = (body?.tools ?? []).some((t) => (t.functionDeclarations ?? []).length > 0);
      return { body, main: isStreamed(pathname) && hasTools, extra: { model: match?.[1] } };
    },
    summary: (body) => `contents=${body.contents.length}`,
    sideReply: options.sideReply ?? (() => ({ text: "{}" })),
    answer: (res, request, _body, reply) => {
      if (reply.error !== undefined) return sendError(res, reply.error.status, reply.error.message);
      const id = `fake-response-${++responseCount}`;
      const built = buildChunks(reply, request.model ?? "", id);
      usageSent.push(built.usage);
      if (isStreamed(request.pathname)) sendStream(res, built.chunks);
      else sendJson(res, 200, built.whole, JSON_UTF8);
    },
    answerOther: (res, { method, pathname }) =>
      sendError(res, 404, `fake Gemini API: no ${method} ${pathname}`),
    scriptFailed: (res, message) => sendError(res, 400, message),
  });
  return Object.assign(fake, { usageSent });
}

/** Whether a `generateContent` path asks for a stream (`:streamGenerateContent`). */
function isStreamed(pathname: string): boolean {
  return GENERATE.exec(pathname)?.[2] === "streamGenerateContent";
}

/** A shell call as Gemini CLI's `run_shell_command` tool takes it. */
export function shellCommand(command: string, usage?: ScriptedUsage): ScriptedReply {
  return {
    functionCalls: [{ name: "run_shell_command", args: { command } }],
    ...(usage ? { usage } : {}),
  };
}

/** A tool result the model receives: the call it answers, its output text, and its error text if any. */
export interface FunctionResponse {
  id: string;
  name: string;
  output: string | undefined;
  error: string | undefined;
}

/** Every `functionResponse` part of a request's conversation, in order. */
export function functionResponses(request: RecordedRequest): FunctionResponse[] {
  return (request.body?.contents ?? []).flatMap(responsesOf);
}

/**
 * The `functionResponse` parts that are new in this request: those after the last `model` content, i.e.
 * the answers to the calls of the previous response. A BeforeTool deny arrives here with the hook's
 * reason in `error`.
 */
export function lastFunctionResponses(request: RecordedRequest): FunctionResponse[] {
  const contents = request.body?.contents ?? [];
  const lastModel = contents.findLastIndex((c) => c.role === "model");
  return lastModel < 0 ? [] : contents.slice(lastModel + 1).flatMap(responsesOf);
}

function responsesOf(content: GeminiContent): FunctionResponse[] {
  return (content.parts ?? []).flatMap((part) => {
    const fr = part.functionResponse;
    if (fr === undefined) return [];
    const text = (v: unknown) =>
      v === undefined ? undefined : typeof v === "string" ? v : JSON.stringify(v);
    return [
      { id: fr.id ?? "", name: fr.name, output: text(fr.response?.output), error: text(fr.response?.error) },
    ];
  });
}

interface BuiltResponse {
  chunks: Record<string, unknown>[];
  whole: Record<string, unknown>;
  usage: SentUsage;
}

/**
 * The response's stream chunks. A reply with text of two characters or more is split in two chunks; each
 * chunk carries `usageMetadata`, the earlier one half the candidate tokens, the last one the whole usage
 * and `finishReason: "STOP"`.
 */
function buildChunks(reply: ScriptedReply, model: string, responseId: string): BuiltResponse {
  const u = { ...DEFAULT_USAGE, ...reply.usage };
  const thoughts = u.thoughtsTokenCount ?? 0;
  const usage: SentUsage = {
    promptTokenCount: u.promptTokenCount,
    candidatesTokenCount: u.candidatesTokenCount,
    totalTokenCount: u.totalTokenCount ?? u.promptTokenCount + u.candidatesTokenCount + thoughts,
  };
  const cached =
    u.cachedContentTokenCount !== undefined ? { cachedContentTokenCount: u.cachedContentTokenCount } : {};
  const partial = Math.floor(u.candidatesTokenCount / 2);
  const chunk = (parts: GeminiPart[], final: boolean) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(final ? { finishReason: "STOP" } : {}) }],
    usageMetadata: final
      ? { ...usage, ...cached, ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}) }
      : {
          promptTokenCount: u.promptTokenCount,
          candidatesTokenCount: partial,
          totalTokenCount: u.promptTokenCount + partial,
          ...cached,
        },
    modelVersion: model,
    responseId,
  });

  const calls: GeminiPart[] = (reply.functionCalls ?? []).map((call) => ({
    functionCall: { name: call.name, args: call.args },
  }));
  const text = reply.text ?? (calls.length === 0 ? "" : undefined);
  const all: GeminiPart[] = [...(text !== undefined ? [{ text }] : []), ...calls];
  const chunks =
    text !== undefined && text.length >= 2
      ? [
          chunk([{ text: text.slice(0, text.length >> 1) }], false),
          chunk([{ text: text.slice(text.length >> 1) }, ...calls], true),
        ]
      : [chunk(all, true)];
  return { chunks, whole: chunk(all, true), usage };
}

/** Streams the chunks as the Gemini API does with `alt=sse`: one `data:` line per chunk. */
function sendStream(res: ServerResponse, chunks: Record<string, unknown>[]): void {
  const write = eventStream(res, { "content-type": "text/event-stream" }, "\r\n");
  for (const chunk of chunks) write(chunk);
  res.end();
}

/** Google's error JSON; the status name matters little to Gemini CLI, the HTTP status does. */
function sendError(res: ServerResponse, status: number, message: string): void {
  const name = status === 404 ? "NOT_FOUND" : status === 429 ? "RESOURCE_EXHAUSTED" : "INVALID_ARGUMENT";
  sendJson(res, status, { error: { code: status, message, status: name } }, JSON_UTF8);
}

function isGenerateBody(json: unknown): json is GenerateContentBody {
  return (
    typeof json === "object" && json !== null && Array.isArray((json as { contents?: unknown }).contents)
  );
}
