/** One hook call over the user's hook daemon's socket, as reins' hook clients make it: signed over a fresh nonce. */
import { request } from "node:http";
import { freshNonce, mac } from "../../src/guard/daemon/key.js";
import { callParts, encodeHeaderValue, PROTOCOL } from "../../src/guard/daemon/protocol.js";

/** What the call names: its project's root and hook secret, its `REINS_*` header, another protocol version. */
export interface DaemonCallHeaders {
  root: string;
  secret: string;
  env?: string;
  protocol?: string;
}

/** POSTs `body` to `/hooks/<agent>` on `socket`; the status and the parsed JSON answer. */
export function daemonCall<Json = Record<string, unknown>>(
  socket: string,
  body: unknown,
  headers: DaemonCallHeaders,
  agent = "claude",
): Promise<{ status: number; json: Json }> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const nonce = freshNonce();
  const rootHeader = encodeHeaderValue(headers.root);
  const auth = mac(headers.secret, callParts(nonce, agent, rootHeader, headers.env ?? "", text));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: socket,
        method: "POST",
        path: `/hooks/${agent}`,
        headers: {
          "content-type": "application/json",
          "x-reins-nonce": nonce,
          "x-reins-auth": auth,
          "x-reins-protocol": headers.protocol ?? PROTOCOL,
          "x-reins-root": rootHeader,
          ...(headers.env !== undefined ? { "x-reins-env": headers.env } : {}),
        },
      },
      (res) => {
        let answer = "";
        res.on("data", (chunk: Buffer) => (answer += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(answer) as Json }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}
