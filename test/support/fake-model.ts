import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What the scripted fake model APIs (fake-anthropic.ts, fake-openai.ts, fake-gemini.ts) share: a server on
 * a free port of 127.0.0.1 that records every request, answers the API's model calls from a script (main
 * turns) or a side reply, and hands everything else to the API's wire format. Each fake is its wire format:
 * how it reads a request and how it writes an answer.
 */

/** A request a fake received, in arrival order. */
export interface ModelRequest<Body> {
  method: string;
  /** Path with query, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** Path without query. */
  pathname: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body, when the body was JSON. */
  json: unknown;
  /** The API's request, when this was one of its model calls. */
  body: Body | undefined;
  /** `main`: a scripted turn; `side`: another model call; `other`: any other endpoint. */
  kind: "main" | "side" | "other";
  /** For main requests, the 0-based index of the turn in the script. */
  turn: number | undefined;
}

/** The script: replies by main turn (turns past the end answer "done"), or a function of the request. */
export type ModelScript<Request, Reply> =
  readonly Reply[] | ((request: Request, turn: number) => Reply | Promise<Reply>);

/** A request as the server hands it to the wire format to read. */
export type HttpRequest = Omit<ModelRequest<never>, "body" | "kind" | "turn">;

/** An API's wire format and script: what a fake adds to the shared server. */
export interface FakeModelSpec<Body, Extra extends object, Reply extends { text?: string }> {
  script: ModelScript<ModelRequest<Body> & Extra, Reply>;
  /**
   * Reads a request: the API's model call in it (undefined for any other endpoint), whether the script
   * answers it, and the fields the format records besides the shared ones.
   */
  read(request: HttpRequest): { body: Body | undefined; main: boolean; extra: Extra };
  /** What a model call shows in the debug log after its kind and turn. */
  summary(body: Body): string;
  /** The reply to side requests. */
  sideReply(request: ModelRequest<Body> & Extra): Reply;
  /** Writes the reply to a model call (the reply's own error included). */
  answer(res: ServerResponse, request: ModelRequest<Body> & Extra, body: Body, reply: Reply): void;
  /** Answers any other endpoint. */
  answerOther(res: ServerResponse, request: ModelRequest<Body> & Extra): void;
  /** Answers a model call whose script threw, with the API's error JSON and HTTP 400 (never retried). */
  scriptFailed(res: ServerResponse, message: string): void;
  /** Called with one line per request, for debugging. */
  log?: ((line: string) => void) | undefined;
}

/** A running fake. */
export interface FakeModel<Request> {
  /** `http://127.0.0.1:<port>`, the client's base URL (the OpenAI fake's ends in `/v1`). */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: Request[];
  /** Errors thrown by the script (each was answered with HTTP 400). */
  readonly errors: Error[];
  /** The main (scripted) requests, in order. */
  mainRequests(): Request[];
  close(): Promise<void>;
}

const EXHAUSTED = { text: "done" };

/** Starts a fake on a free port of 127.0.0.1. */
export async function startFakeModel<Body, Extra extends object, Reply extends { text?: string }>(
  spec: FakeModelSpec<Body, Extra, Reply>,
): Promise<FakeModel<ModelRequest<Body> & Extra>> {
  type Request = ModelRequest<Body> & Extra;
  const requests: Request[] = [];
  const errors: Error[] = [];
  let mainTurns = 0;

  const replyFor = async (request: Request): Promise<Reply> => {
    const { script } = spec;
    if (request.kind !== "main" || request.turn === undefined) return spec.sideReply(request);
    if (typeof script === "function") return script(request, request.turn);
    // Only `text` is set, which every reply type allows.
    return script[request.turn] ?? (EXHAUSTED as Reply);
  };

  const handle = (http: HttpRequest, res: ServerResponse): void => {
    const { body, main, extra } = spec.read(http);
    const kind = body === undefined ? "other" : main ? "main" : "side";
    const request: Request = {
      ...http,
      ...extra,
      body,
      kind,
      turn: kind === "main" ? mainTurns++ : undefined,
    };
    requests.push(request);
    spec.log?.(
      `${http.method} ${http.path} ${kind}${request.turn === undefined ? "" : ` turn ${request.turn}`}` +
        (body === undefined ? "" : ` ${spec.summary(body)}`),
    );

    if (body === undefined) {
      spec.answerOther(res, request);
      return;
    }
    replyFor(request).then(
      (reply) => spec.answer(res, request, body, reply),
      (error: unknown) => {
        const err = error instanceof Error ? error : new Error(String(error));
        errors.push(err);
        spec.scriptFailed(res, `fake script failed: ${err.message}`);
      },
    );
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      const http: HttpRequest = {
        method: req.method ?? "GET",
        path,
        pathname: path.split("?")[0] ?? path,
        headers: req.headers,
        rawBody,
        json: parseJson(rawBody),
      };
      handle(http, res);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    errors,
    mainRequests: () => requests.filter((r) => r.kind === "main"),
    close: () =>
      new Promise<void>((resolve) => {
        // The CLIs keep connections alive; close them or `close` waits for their idle timeout.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with JSON; `headers` are added to (and may replace) `content-type: application/json`. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Starts a server-sent events answer (200, `text/event-stream`, no caching; `headers` are added and may
 * replace those) and returns a function that writes one event: an `event:` line when it is named, then the
 * JSON `data:` line. The caller ends the answer with `res.end()`.
 */
export function eventStream(
  res: ServerResponse,
  headers: Record<string, string> = {},
  newline = "\n",
): (data: unknown, event?: string) => void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    ...headers,
  });
  return (data, event) => {
    const name = event === undefined ? "" : `event: ${event}${newline}`;
    res.write(`${name}data: ${JSON.stringify(data)}${newline}${newline}`);
  };
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
