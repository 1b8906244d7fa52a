/** `reins serve`: runs the project's server (the hooks' and the API's), until SIGTERM or SIGINT. */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { openServices } from "../../guard/hooks/hook-call.js";
import {
  DEFAULT_HOST,
  DEFAULT_PORT,
  serverAt,
  ensureServer,
  serveStartLock,
} from "../../server/server-process.js";
import {
  agentToken,
  agentTokenPath,
  apiToken,
  hookSecret,
  tokenPath,
} from "../../base/config/hook-secret.js";
import { createServer } from "../../server/server.js";
import type { AgentContext } from "../context.js";
import { binPath } from "./bin-path.js";

/** `reins serve`: the server in the foreground, or with --ensure one in the background. */
export function registerServeCommand(root: Command, ctx: AgentContext): void {
  const { io, result } = ctx;
  const policyOf = () => ctx.loaded();
  root
    .command("serve")
    .description("run the daemon: answers agent hooks over loopback HTTP with the store kept open")
    .option("--host <host>", "address to bind", DEFAULT_HOST)
    .option("--port <port>", "port", String(DEFAULT_PORT))
    .option("--ensure", "start the daemon in the background unless one already answers, then exit")
    .option("--token <token>", "the API's bearer token (default: $REINS_TOKEN, else .reins/api-token)")
    .option("--cors <origins>", "comma-separated origins allowed to call the API from a browser")
    .option("--all", "one loopback dashboard of every project of the user's (port 7870 unless --port)")
    .action(
      async (
        opts: { host: string; port: string; ensure?: boolean; token?: string; cors?: string; all?: boolean },
        command: Command,
      ) => {
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new ReinsError("usage", `--port must be 0..65535, got "${opts.port}"`);
        if (opts.all === true) {
          const { ALL_PORT, serveAll } = await import("./serve-all.js");
          return serveAll(
            io,
            opts.host,
            command.getOptionValueSource("port") === "default" ? ALL_PORT : port,
          );
        }
        const loaded = policyOf();
        if (opts.ensure === true) {
          const state = await ensureServer({ root: loaded.root, bin: binPath(), host: opts.host, port });
          io.stdout(`reins daemon ${state} on http://${opts.host}:${port}\n`);
          if (state === "failed") result.code = 1;
          return;
        }
        const origins = opts.cors?.split(",").map((o) => o.trim());
        if (origins?.some((o) => o === "*" || o === "null"))
          throw new ReinsError(
            "usage",
            "--cors: name the origins that may call the API (https://ops.example.com); '*' or 'null' would let any web page act with a person's token",
          );
        const given = opts.token ?? io.env.REINS_TOKEN;
        if (given !== undefined && given.length < 16)
          throw new ReinsError("usage", "the API token must be at least 16 characters");
        const token = given !== undefined ? { value: given, created: false } : apiToken(loaded.root);
        const agents = agentToken(loaded.root);
        // --store wins over REINS_STORE and the policy's store, as for every other command.
        const flag = root.opts<{ store?: string }>().store;
        // The server comes up while Redis is down: it answers hooks fail-open (or fail-closed) and spools,
        // rather than leave every hook without an answer until the store is back.
        const services = await openServices(loaded.root, io.env, {
          requireConnection: false,
          ...(flag !== undefined ? { storeSpec: flag } : {}),
        });
        const app = await createServer({
          services,
          secret: hookSecret(loaded.root),
          token: token.value,
          agentToken: agents.value,
          host: opts.host,
          ...(origins !== undefined ? { corsOrigins: origins } : {}),
          log: (line) => io.stderr(`${line}\n`),
        });
        let listened: string;
        try {
          listened = await app.listen({ host: opts.host, port });
        } catch (error) {
          // Close the store too: an open Redis connection would keep a server that never listened alive.
          await app.close();
          await services.store.close();
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EADDRINUSE") {
            const holder = await serverAt(opts.host, port, loaded.root);
            throw new ReinsError(
              "conflict",
              holder === "ours"
                ? `this project's server already runs on http://${opts.host}:${port}/ (pid in .reins/serve.pid); nothing to start`
                : `${opts.host}:${port} is taken by another program or another project's reins server: choose another --port (or --port 0 for any free one)`,
            );
          }
          throw error;
        } finally {
          // The start is over, one way or the other: a hook may start the server again.
          rmSync(serveStartLock(loaded.root), { force: true });
        }
        // Fastify names one local address; on a wildcard host, say the host given, so nobody believes the
        // server is on loopback only.
        const address = /^(0\.0\.0\.0|::|\[::\])$/.test(opts.host)
          ? `http://${opts.host.includes(":") ? `[${opts.host.replace(/[[\]]/g, "")}]` : opts.host}:${new URL(listened).port}`
          : listened;
        const pidFile = join(loaded.root, ".reins", "serve.pid");
        writeFileSync(pidFile, `${process.pid}\n`);
        io.stdout(
          `reins serving ${address} for ${loaded.root} (store: ${services.store.location}; dashboard: ${address}/; hooks: POST /hooks/<agent>; API: /api; metrics: /metrics)\n`,
        );
        if (token.created)
          io.stdout(`API token (shown once; kept in ${tokenPath(loaded.root)}, mode 0600): ${token.value}\n`);
        if (agents.created)
          io.stdout(
            `agents' token (for remote hooks' REINS_TOKEN; never a person's action): ${agentTokenPath(loaded.root)}, mode 0600\n`,
          );
        await new Promise<void>((resolve) => {
          const stop = () => {
            rmSync(pidFile, { force: true });
            void app
              .close()
              .then(() => services.store.close())
              .then(resolve);
          };
          process.once("SIGTERM", stop);
          process.once("SIGINT", stop);
        });
      },
    );
}
