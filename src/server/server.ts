import Fastify, { type FastifyInstance } from "fastify";
import { answerHook, hookFailure, readHookInput, type HookServices } from "../hooks/run-hook.js";
import { authorized } from "./secret.js";

export interface ServerOptions {
  services: HookServices;
  /** The bearer token hook calls must present. */
  secret: string;
  /** Logs a line per failure (never the hook input). @default nothing */
  log?: (line: string) => void;
}

/**
 * The long-lived reins process (`reins serve`): answers agent hooks over loopback HTTP with the store
 * already open, so a guarded tool call costs a round trip instead of a Node start-up. Claude Code posts
 * its `"type": "http"` hooks here directly; command-hook agents reach it through `bin/reins-hook`.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const { services, secret } = options;
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
  // Hook bodies are answered from their raw text, so a malformed body still gets an allow, not a 400.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  app.get("/healthz", () => ({ ok: true, root: services.root, store: services.store.kind }));

  app.post<{ Params: { agent: string } }>("/hooks/:agent", async (request, reply) => {
    if (!authorized(request.headers.authorization, secret)) {
      return reply.code(401).send({ error: "a valid bearer token is required (see .reins/hook-secret)" });
    }
    const agent = request.params.agent;
    const checked = readHookInput(agent, (request.body as Buffer | undefined) ?? Buffer.alloc(0));
    let result;
    if (!("adapter" in checked)) result = checked;
    else {
      try {
        result = await answerHook(checked.adapter, checked.input, services, Date.now());
      } catch (error) {
        result = hookFailure(agent, error);
      }
    }
    if (result.warning !== "") options.log?.(result.warning);
    // An allow is an empty object: Claude Code reads a 2xx JSON body exactly like a command hook's stdout.
    return reply
      .code(200)
      .header("content-type", "application/json")
      .send(JSON.stringify(result.reply ?? {}));
  });

  return app;
}
