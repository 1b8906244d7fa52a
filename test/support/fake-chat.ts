import {
  eventStream,
  sendJson,
  startFakeModel,
  type FakeModel,
  type ModelRequest,
  type ModelScript,
} from "./fake-model.js";

/**
 * A scripted fake of the OpenAI Chat Completions API with streaming (`POST /v1/chat/completions`,
 * `stream: true`, SSE chunks with `tool_calls` and a last chunk with `usage`), for the CLIs built on the AI
 * SDK's openai-compatible provider (opencode, Kilo Code). A request that offers tools is a main turn and
 * follows the script; one without tools (opencode's title request with the small model) is a side request
 * answered "title". Every request is recorded, and every token count sent is kept in `sent`.
 */

/** The JSON body of a chat request (the fields tests read). */
export interface ChatBody {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: { type: string; function?: { name: string } }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** A request the fake received. */
export type ChatRequest = ModelRequest<ChatBody>;

/** One tool call of a reply. */
export interface ChatToolCall {
  name: string;
  arguments: unknown;
}

/** What the fake answers on one request. */
export interface ChatReply {
  text?: string;
  toolCalls?: ChatToolCall[];
  /** @default `{ prompt: 100, completion: 20 }` */
  usage?: { prompt: number; completion: number };
}

/**
 * The running fake; `url` ends in `/v1`. `sent` sums the token counts it streamed on main turns, `sideSent`
 * on the others (the title request).
 */
export interface FakeChat extends FakeModel<ChatRequest> {
  readonly sent: { input: number; output: number };
  readonly sideSent: { input: number; output: number };
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeChat(
  script: ModelScript<ChatRequest, ChatReply>,
  log?: (line: string) => void,
): Promise<FakeChat> {
  const sent = { input: 0, output: 0 };
  const sideSent = { input: 0, output: 0 };
  let count = 0;
  const fake = await startFakeModel<ChatBody, object, ChatReply>({
    script,
    log,
    read: ({ method, pathname, json }) => {
      const body =
        method === "POST" && pathname === "/v1/chat/completions" && isChat(json) ? json : undefined;
      return { body, main: body !== undefined && (body.tools ?? []).length > 0, extra: {} };
    },
    summary: (body) =>
      `model=${body.model} messages=${body.messages.length} tools=${body.tools?.length ?? 0}`,
    sideReply: () => ({ text: "title" }),
    answer: (res, request, body, reply) => {
      const id = `chatcmpl_fake_${++count}`;
      const usage = reply.usage ?? { prompt: 100, completion: 20 };
      const tally = request.kind === "main" ? sent : sideSent;
      tally.input += usage.prompt;
      tally.output += usage.completion;
      const chunk = (delta: unknown, finish: string | null, extra: object = {}) => ({
        id,
        object: "chat.completion.chunk",
        created: 1_767_225_600,
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      });
      const send = eventStream(res);
      send(chunk({ role: "assistant", content: "" }, null));
      if (reply.text !== undefined) send(chunk({ content: reply.text }, null));
      (reply.toolCalls ?? []).forEach((call, index) =>
        send(
          chunk(
            {
              tool_calls: [
                {
                  index,
                  id: `call_${count}_${index}`,
                  type: "function",
                  function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                },
              ],
            },
            null,
          ),
        ),
      );
      const finish = (reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop";
      send(chunk({}, finish));
      send({
        ...chunk({}, null),
        choices: [],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
        },
      });
      res.write("data: [DONE]\n\n");
      res.end();
    },
    answerOther: (res, { method, pathname }) =>
      sendJson(res, 404, { error: { message: `fake chat API: no ${method} ${pathname}` } }),
    scriptFailed: (res, message) => sendJson(res, 400, { error: { message, type: "invalid_request_error" } }),
  });
  return { ...fake, url: `${fake.url}/v1`, sent, sideSent };
}

/** The texts of every `tool` message of a request: what the model was told of its tool calls. */
export function toolResults(request: ChatRequest): string[] {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/** The texts of every user message of a request. */
export function userTexts(request: ChatRequest): string[] {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

function isChat(json: unknown): json is ChatBody {
  return (
    typeof json === "object" &&
    json !== null &&
    Array.isArray((json as { messages?: unknown }).messages) &&
    typeof (json as { model?: unknown }).model === "string"
  );
}
