/** The live resource: every record this server writes, as server-sent events. */
import type { EventHub } from "../stream.js";
import type { ApiApp } from "./api-context.js";

/** GET /stream: attaches the answer to the hub until the client goes. */
export function registerStream(app: ApiApp, hub: EventHub): void {
  app.get("/stream", (request, reply) => {
    reply.hijack();
    hub.attach(reply.raw);
    request.raw.on("close", () => reply.raw.end());
  });
}
