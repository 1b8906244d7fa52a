/** The CLI commands that connect agents to reins: hook, serve, init and doctor. */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { ReinsError } from "../core/errors.js";
import {
  ENSURE_DAEMON,
  INIT_AGENTS,
  NO_TRUST_ENV,
  buildClient,
  initAgent,
  readSettings,
  settingsPathOf,
  trustAgentHooks,
  type InstallMode,
} from "../hooks/init.js";
import { AGENTS } from "../hooks/adapters.js";
import { openServices, runHook } from "../hooks/run-hook.js";
import { DEFAULT_HOST, DEFAULT_PORT, ensureDaemon } from "../server/daemon.js";
import { agentToken, agentTokenPath, apiToken, hookSecret, tokenPath } from "../server/secret.js";
import { createServer } from "../server/server.js";
import { findRoot, type LoadedPolicy } from "../config/load-policy.js";
import { installMcp } from "../mcp/install.js";
import { doctor, formatDoctor } from "./doctor.js";
import type { Io } from "./io.js";

/** What the agent commands need from the program. */
export interface AgentContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
  /** The process's exit code, for commands that fail without throwing. */
  result: { code: number };
}

/** A string field of a hook input, if it is JSON with one. */
function hookField(raw: Buffer, field: string): string | undefined {
  try {
    const value = (JSON.parse(raw.toString()) as Record<string, unknown>)[field];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

const hookCwd = (raw: Buffer) => hookField(raw, "cwd");
const hookEvent = (raw: Buffer) => hookField(raw, "hook_event_name");

/** Adds a line to a Claude Code reply's additional context (or makes a reply that carries it). */
function withContext(reply: object | null, note: string): object {
  const r = (reply ?? {}) as { hookSpecificOutput?: { additionalContext?: string } };
  const specific = r.hookSpecificOutput;
  if (specific === undefined) return { ...r, systemMessage: note };
  return {
    ...r,
    hookSpecificOutput: {
      ...specific,
      additionalContext: [specific.additionalContext, note].filter(Boolean).join("\n"),
    },
  };
}

/** The reins executable, for hook commands and the background daemon. */
/** reins' own bin script, which agents' hooks run. */
export function binPath(): string {
  return fileURLToPath(new URL("../../bin/reins.js", import.meta.url));
}

/** `hook`, `serve`, `init` and `doctor`: how agents reach reins. */
export function registerAgentCommands(root: Command, ctx: AgentContext): void {
  const { io, result } = ctx;
  const policyOf = () => ctx.loaded();
  root
    .command("hook")
    .description(
      "answer one agent hook call: the event JSON on stdin, the agent's reply on stdout (always exit 0)",
    )
    .argument("<agent>", `the agent: ${AGENTS.join(", ")}`)
    .option(
      ENSURE_DAEMON,
      "also start the daemon when it is not running, and tell the agent when it was down",
    )
    .option("--port <port>", "the daemon's port", String(DEFAULT_PORT))
    .action(async (agent: string, opts: { ensureDaemon?: boolean; port: string }) => {
      const cwd = root.opts<{ cwd: string }>().cwd;
      const raw = await io.stdin();
      const result = await runHook(agent, raw, io.env, cwd);
      let reply = result.reply;
      if (opts.ensureDaemon === true) {
        const state = await ensureDaemon({
          root: findRoot(hookCwd(raw) ?? cwd),
          bin: binPath(),
          host: DEFAULT_HOST,
          port: Number(opts.port),
        });
        if (state !== "running" && !(state === "started" && hookEvent(raw) === "SessionStart")) {
          const note =
            state === "started"
              ? "reins: the reins daemon was not running, so tool calls since it stopped were not guarded; it has been restarted."
              : `reins: the reins daemon ${state === "port taken" ? `could not start: port ${opts.port} is taken by another program or project` : "could not be started"}; tool calls are NOT guarded (see .reins/serve.log).`;
          io.stderr(`${note}\n`);
          reply = withContext(reply, note);
        }
      }
      if (reply !== null) io.stdout(`${JSON.stringify(reply)}\n`);
      if (result.warning !== "") io.stderr(`${result.warning}\n`);
    });

  root
    .command("serve")
    .description("run the daemon: answers agent hooks over loopback HTTP with the store kept open")
    .option("--host <host>", "address to bind", DEFAULT_HOST)
    .option("--port <port>", "port", String(DEFAULT_PORT))
    .option("--ensure", "start the daemon in the background unless one already answers, then exit")
    .option("--token <token>", "the API's bearer token (default: $REINS_TOKEN, else .reins/api-token)")
    .option("--cors <origins>", "comma-separated origins allowed to call the API from a browser")
    .action(async (opts: { host: string; port: string; ensure?: boolean; token?: string; cors?: string }) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new ReinsError("usage", `--port must be 0..65535, got "${opts.port}"`);
      const loaded = policyOf();
      if (opts.ensure === true) {
        const state = await ensureDaemon({ root: loaded.root, bin: binPath(), host: opts.host, port });
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
      // The daemon comes up while Redis is down: it answers hooks fail-open (or fail-closed) and spools,
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
        if (code === "EADDRINUSE")
          throw new ReinsError(
            "conflict",
            `${opts.host}:${port} is taken by another program or reins server`,
          );
        throw error;
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
    });

  root
    .command("init")
    .description("install reins' hooks into an agent's settings (merging with the user's own hooks)")
    .argument("<agent>", INIT_AGENTS.join(", "))
    .option("--user", "the user's settings in the home folder instead of the project's")
    .option("--uninstall", "remove exactly the hooks reins added")
    .option(
      "--in-process",
      "command hooks that start Node and answer in-process on every call (slow: no daemon needed)",
    )
    .option("--http", "claude: native http hooks to the daemon (the default for a project)")
    .option("--port <port>", "the daemon's port", String(DEFAULT_PORT))
    .option(
      "--no-trust",
      `codex, gemini: leave the agent's own trust settings alone and print what to add (also ${NO_TRUST_ENV}=1)`,
    )
    .option(
      "--mcp",
      "add reins' MCP server (`reins mcp`) to the agent's MCP configuration instead of the hooks",
    )
    .action(
      (
        agent: string,
        opts: {
          user?: boolean;
          uninstall?: boolean;
          inProcess?: boolean;
          http?: boolean;
          port: string;
          trust: boolean;
          mcp?: boolean;
        },
      ) => {
        if (opts.mcp === true) {
          initMcp(agent, opts);
          return;
        }
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port <= 0 || port > 65535)
          throw new ReinsError("usage", `--port must be 1..65535, got "${opts.port}"`);
        if (opts.http === true && agent !== "claude")
          throw new ReinsError(
            "usage",
            "--http is for claude; codex and gemini reach the daemon through the client",
          );
        if (opts.http === true && (opts.inProcess === true || opts.user === true))
          throw new ReinsError(
            "usage",
            "--http is for one project's settings: not with --in-process or --user",
          );
        const loaded = policyOf();
        // Fastest first: Claude Code's own http hooks for a project (they carry this project's secret, so not
        // in the user's settings, which every project shares); else the native client.
        const mode: InstallMode =
          opts.inProcess === true
            ? "in-process"
            : agent === "claude" && opts.user !== true
              ? "http"
              : "client";
        const http =
          mode === "http" && opts.uninstall !== true
            ? { url: `http://${DEFAULT_HOST}:${port}/hooks/claude`, secret: hookSecret(loaded.root) }
            : undefined;
        let client: string | null = null;
        if (mode === "client" && opts.uninstall !== true) {
          if (opts.user !== true) hookSecret(loaded.root); // the client authenticates with it
          client = buildClient(
            loaded.root,
            fileURLToPath(new URL("../../src/client/reins-hook.c", import.meta.url)),
          );
          if (client === null)
            io.stderr(
              "reins: no C compiler found; the hooks use bin/reins-hook (sh + curl), which is slower\n",
            );
        }
        const home = io.env.HOME ?? homedir();
        const user = opts.user === true;
        const common = { bin: binPath(), port };
        // Claude Code's http hooks live in settings.local.json, the others in settings.json: an install in one
        // file takes reins' hooks out of the other, so an agent never runs both.
        const files =
          agent === "claude" && !user
            ? mode === "http"
              ? [
                  settingsPathOf(agent, loaded.root, home, false, true),
                  settingsPathOf(agent, loaded.root, home, false),
                ]
              : [
                  settingsPathOf(agent, loaded.root, home, false),
                  settingsPathOf(agent, loaded.root, home, false, true),
                ]
            : [settingsPathOf(agent, loaded.root, home, user, false, io.env)];
        const [target = "", ...others] = files;
        const before = readSettings(target);
        const said = [
          initAgent(agent, {
            ...common,
            settingsPath: target,
            mode,
            ...(opts.uninstall === true ? { uninstall: true } : {}),
            ...(http !== undefined ? { http } : {}),
            ...(client !== null ? { client } : {}),
          }),
        ];
        for (const other of others) {
          if (!existsSync(other)) continue;
          const removed = initAgent(agent, { ...common, settingsPath: other, uninstall: true });
          if (removed.startsWith("removed")) said.push(removed);
        }
        // Codex and Gemini CLI run no hook of a project they do not trust, and say nothing about it.
        const trust = trustAgentHooks(agent, {
          root: loaded.root,
          home,
          env: io.env,
          settingsPath: target,
          before,
          user,
          uninstall: opts.uninstall === true,
          write: opts.trust && !["1", "true"].includes(io.env[NO_TRUST_ENV] ?? ""),
        });
        io.stdout(`${[...said, ...(trust.failed ? [] : trust.said)].join("\n")}\n`);
        if (trust.failed) {
          io.stderr(`${trust.said.map((line) => `reins: ${line}`).join("\n")}\n`);
          result.code = 1;
        }
      },
    );

  /** `init <agent> --mcp`: the MCP server in the agent's configuration, and the trust the agent needs to read it. */
  function initMcp(
    agent: string,
    opts: { user?: boolean; uninstall?: boolean; trust: boolean; http?: boolean; inProcess?: boolean },
  ): void {
    if (opts.http === true || opts.inProcess === true)
      throw new ReinsError("usage", "--http and --in-process are for hooks, not --mcp");
    const loaded = policyOf();
    const home = io.env.HOME ?? homedir();
    const user = opts.user === true;
    const uninstall = opts.uninstall === true;
    const said = installMcp(agent, { root: loaded.root, home, env: io.env, bin: binPath(), user, uninstall });
    // Codex and Gemini CLI read a project's configuration only in a project they trust. Removing the server
    // leaves the trust alone: reins' hooks may still need it (`reins init <agent> --uninstall` removes it).
    let failed = false;
    if (!user && !uninstall && agent !== "claude") {
      const hooks = settingsPathOf(agent, loaded.root, home, false, false, io.env);
      const trust = trustAgentHooks(agent, {
        root: loaded.root,
        home,
        env: io.env,
        settingsPath: hooks,
        before: readSettings(hooks),
        user: false,
        uninstall: false,
        write: opts.trust && !["1", "true"].includes(io.env[NO_TRUST_ENV] ?? ""),
      });
      failed = trust.failed;
      if (failed) io.stderr(`${trust.said.map((line) => `reins: ${line}`).join("\n")}\n`);
      else {
        // The trust lines speak of hooks; here it is the configuration the server is in that needs it.
        const file = agent === "codex" ? ".codex/config.toml" : ".gemini/settings.json";
        const name = agent === "codex" ? "Codex" : "Gemini CLI";
        said.push(
          trust.said.some((line) => line.includes("already trusts"))
            ? `${name} already trusts this project, so it reads its ${file}`
            : `trusted this project for ${name}, which reads a project's ${file} only when it trusts the project`,
        );
      }
    }
    io.stdout(`${said.join("\n")}\n`);
    if (failed) result.code = 1;
  }

  root
    .command("doctor")
    .description(
      "check each agent's hooks (installed, trusted where the agent asks for it), the daemon and the store; exit 1 when an installed agent is not guarded",
    )
    .option("--json", "machine-readable output")
    .option("--port <port>", "the daemon's port (default: the port the installed hooks name, else 7878)")
    .action(async (opts: { json?: boolean; port?: string }) => {
      const port = opts.port !== undefined ? Number(opts.port) : undefined;
      if (port !== undefined && (!Number.isInteger(port) || port <= 0 || port > 65535))
        throw new ReinsError("usage", `--port must be 1..65535, got "${opts.port}"`);
      const global = root.opts<{ cwd: string; policy?: string; store?: string }>();
      const report = await doctor({
        root: findRoot(global.cwd),
        home: io.env.HOME ?? homedir(),
        env: io.env,
        ...(port !== undefined ? { port } : {}),
        ...(global.policy !== undefined ? { policyFile: global.policy } : {}),
        ...(global.store !== undefined ? { storeSpec: global.store } : {}),
      });
      io.stdout(opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
      if (!report.ok) result.code = 1;
    });
}
