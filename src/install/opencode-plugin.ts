/** reins' plugin for opencode and Kilo Code: one self-contained JS file `reins init opencode|kilo` writes into the project. */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The agents guarded through a plugin instead of command hooks. */
export const PLUGIN_AGENTS = ["opencode", "kilo"] as const;

/** Whether `agent` is guarded through reins' plugin. */
export function isPluginAgent(agent: string): agent is (typeof PLUGIN_AGENTS)[number] {
  return (PLUGIN_AGENTS as readonly string[]).includes(agent);
}

/** Where the plugin lives in a project: opencode loads `.opencode/plugins/*.js`, Kilo Code `.kilo/plugins/*.js`. */
export function pluginPath(agent: string, root: string): string {
  return join(root, agent === "kilo" ? ".kilo" : ".opencode", "plugins", "reins.js");
}

/** The first line of the plugin: how `reins doctor` and `--uninstall` know the file is reins'. */
export const PLUGIN_MARK = "// reins: the guard of this project's agent";

/** What the plugin is built with: the agent it speaks for, and the reins it falls back to. */
export interface PluginOptions {
  agent: string;
  /** The Node that runs reins when no daemon answers. */
  node: string;
  /** reins' bin/reins.js. */
  bin: string;
  /** The user's hook daemon's name (guard/daemon/paths.ts, daemonName). */
  daemon: string;
}

/** The constants the plugin was written with, read back from its text (null when it is not reins' plugin). */
export function readPlugin(path: string): PluginOptions | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  if (!text.startsWith(PLUGIN_MARK)) return null;
  const line = /^const SETTINGS = (.*);$/m.exec(text)?.[1];
  try {
    return line === undefined ? null : (JSON.parse(line) as PluginOptions);
  } catch {
    return null;
  }
}

/**
 * Writes the plugin (aside, then renamed into place), or with `uninstall` removes it when it is reins'.
 * Returns what it did.
 */
export function installPlugin(path: string, options: PluginOptions, uninstall: boolean): string {
  if (uninstall) {
    if (readPlugin(path) === null) return `no reins plugin at ${path}`;
    rmSync(path, { force: true });
    return `removed reins' plugin ${path}`;
  }
  const text = pluginSource(options);
  if (existsSync(path) && readFileSync(path, "utf8") === text) return `reins' plugin already in ${path}`;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.reins-tmp`, text);
  renameSync(`${path}.reins-tmp`, path);
  return `wrote reins' plugin ${path}`;
}

/**
 * The plugin's text. It runs inside opencode (on Bun) and imports only Node's built-ins: each hook call goes
 * to the user's hook daemon over its Unix socket, signed with the project's hook secret, and an answer is
 * taken only with the daemon key's proof (docs/daemon-proof.md), as the native client does. When no daemon
 * answers it runs `reins hook <agent> --start-daemon` (in-process, which starts the daemon for the next calls);
 * an answer without the proof goes in-process with `--unproven`. When reins cannot answer at all, a tool call
 * is refused (fail closed) and the person is told: never silently unguarded.
 */
export function pluginSource(options: PluginOptions): string {
  const head = `${PLUGIN_MARK} (written by \`reins init ${options.agent}\`; \`reins init ${options.agent} --uninstall\` removes it).\n`;
  return head + PLUGIN_BODY.replace("__SETTINGS__", () => JSON.stringify(options));
}

/** The plugin after its first line; `__SETTINGS__` stands for its constants. */
const PLUGIN_BODY = `import { request } from "node:http";
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync, existsSync, statSync } from "node:fs";
import { spawn } from "node:child_process";
import { join, dirname } from "node:path";
import { homedir } from "node:os";

const SETTINGS = __SETTINGS__;
const DAEMON_VARIABLES = new Set(["REINS_RUNTIME_DIR", "REINS_DAEMON_IDLE", "REINS_DAEMON_PROJECT_IDLE", "REINS_PORT"]);
/** How many "done" refusals in a row (no tool call between) before the agent may stop anyway. */
const MAX_REFUSALS = 3;

function findRoot(dir) {
  let here = dir;
  for (;;) {
    if (["reins.config.json", ".reins", ".git"].some((f) => existsSync(join(here, f)))) return here;
    const up = dirname(here);
    if (up === here) return dir;
    here = up;
  }
}

function runtimeDir(env) {
  if (env.REINS_RUNTIME_DIR) return env.REINS_RUNTIME_DIR;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, "reins");
  return join(env.HOME || homedir(), ".cache", "reins", "run");
}

function encode(text) {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\\-._~/]/.test(c) ? c : "%" + byte.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

function projectEnv(env) {
  return Object.keys(env)
    .filter((n) => n.startsWith("REINS_") && !DAEMON_VARIABLES.has(n))
    .sort()
    .map((n) => encode(n) + "=" + encode(env[n] ?? ""))
    .join("&");
}

const mac = (key, parts) => {
  const h = createHmac("sha256", key);
  parts.forEach((p, i) => { if (i > 0) h.update("\\n"); h.update(p); });
  return h.digest("hex");
};

/** The daemon key, when it is a private file of this user's holding 64 hex digits. */
function daemonKey(runtime) {
  try {
    const path = join(runtime, "daemon.key");
    const stat = statSync(path);
    if (!stat.isFile() || stat.uid !== process.getuid() || (stat.mode & 0o077) !== 0) return null;
    const key = readFileSync(path, "latin1").trim();
    return /^[0-9a-f]{64}$/.test(key) ? key : null;
  } catch {
    return null;
  }
}

function readSecret(root) {
  try {
    const secret = readFileSync(join(root, ".reins", "hook-secret"), "utf8").trim();
    return secret === "" ? null : secret;
  } catch {
    return null;
  }
}

/** One call to the daemon: its reply's text, "unproven" for an answer without the key's proof, or null. */
function viaDaemon(root, body) {
  const runtime = runtimeDir(process.env);
  const key = daemonKey(runtime);
  const secret = readSecret(root);
  const socket = join(runtime, SETTINGS.daemon + ".sock");
  if (key === null || secret === null || !existsSync(socket)) return Promise.resolve(null);
  const nonce = Math.floor(Date.now() / 1000) + "-" + randomBytes(16).toString("hex");
  const rootHeader = encode(root);
  const envHeader = projectEnv(process.env);
  const headers = {
    "content-type": "application/json",
    "x-reins-protocol": "2",
    "x-reins-root": rootHeader,
    "x-reins-nonce": nonce,
    "x-reins-auth": mac(secret, [nonce, SETTINGS.agent, rootHeader, envHeader, body]),
  };
  if (envHeader !== "") headers["x-reins-env"] = envHeader;
  return new Promise((resolve) => {
    const req = request(
      { socketPath: socket, path: "/hooks/" + SETTINGS.agent, method: "POST", headers, timeout: 10000 },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          if (res.statusCode !== 200) return resolve(null);
          const text = Buffer.concat(chunks).toString("utf8");
          resolve(mac(key, [nonce, text]) === res.headers["x-reins-proof"] ? text : "unproven");
        });
        res.on("error", () => resolve(null));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(null));
    req.end(body);
  });
}

/** The call answered by reins in its own process, which starts the daemon for the next calls. */
function inProcess(root, body, flag) {
  return new Promise((resolve, reject) => {
    const child = spawn(SETTINGS.node, [SETTINGS.bin, "hook", SETTINGS.agent, flag, SETTINGS.daemon], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out = [];
    const err = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), 60000);
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", (e) => { clearTimeout(timer); reject(e); });
    child.on("close", (code) => {
      clearTimeout(timer);
      const warning = Buffer.concat(err).toString("utf8").trim();
      if (warning !== "") console.error(warning);
      if (code !== 0) return reject(new Error("reins hook " + SETTINGS.agent + " exited " + code));
      resolve(Buffer.concat(out).toString("utf8").trim());
    });
    child.stdin.end(body);
  });
}

/** reins' reply to one call (null: allowed, nothing to say). Throws when reins could not answer. */
async function ask(root, input) {
  const body = JSON.stringify(input);
  let text = await viaDaemon(root, body);
  if (text === "unproven") text = await inProcess(root, body, "--unproven");
  else if (text === null) text = await inProcess(root, body, "--start-daemon");
  if (text === "" || text === "{}") return null;
  return JSON.parse(text);
}

export const ReinsGuard = async ({ client, directory }) => {
  const root = findRoot(directory);
  const context = new Map();
  const notes = new Map();
  const counted = new Set();
  const toolsInStep = new Set();
  const refusals = new Map();
  const call = (event, session, fields = {}) =>
    ask(root, { hook_event_name: event, session_id: session, cwd: directory, ...fields });
  const loud = (what, error) =>
    console.error("reins: " + what + " was not guarded: " + (error && error.message ? error.message : error));
  return {
    "chat.message": async (input) => {
      try {
        const reply = await call("prompt", input.sessionID);
        if (reply && reply.context) context.set(input.sessionID, reply.context);
      } catch (error) {
        loud("a prompt", error);
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      const text = input.sessionID === undefined ? undefined : context.get(input.sessionID);
      if (text) output.system.push(text);
    },
    "chat.params": async (input) => {
      toolsInStep.delete(input.sessionID);
    },
    // Awaited by opencode before the step ends: a refused "done" adds the reason as a user message while the
    // loop still waits here, so the loop sees a prompt newer than its answer and takes another turn.
    "experimental.text.complete": async (input, output) => {
      const session = input.sessionID;
      if (toolsInStep.has(session)) return;
      try {
        const reply = await call("stop", session, { last_message: output.text });
        if (!reply || reply.decision !== "deny") return refusals.delete(session);
        const n = (refusals.get(session) ?? 0) + 1;
        refusals.set(session, n);
        if (n > MAX_REFUSALS)
          return console.error("reins: the agent stopped after " + MAX_REFUSALS + " refusals: " + reply.reason);
        await client.session.prompt({
          path: { id: session },
          body: { noReply: true, parts: [{ type: "text", text: reply.reason }] },
        });
      } catch (error) {
        loud("a claim of done", error);
      }
    },
    "tool.execute.before": async (input, output) => {
      toolsInStep.add(input.sessionID);
      refusals.delete(input.sessionID);
      let reply;
      try {
        reply = await call("tool.before", input.sessionID, { tool_name: input.tool, tool_input: output.args });
      } catch (error) {
        loud("a tool call", error);
        throw new Error("reins could not judge this call (" + (error && error.message) + "), so it is refused. Tell the person that reins' guard is failing.");
      }
      if (reply && reply.decision === "deny") throw new Error(reply.reason);
      if (reply && reply.note) notes.set(input.callID, reply.note);
    },
    "tool.execute.after": async (input, output) => {
      try {
        const reply = await call("tool.after", input.sessionID, {
          tool_name: input.tool,
          tool_input: input.args,
          tool_output: { output: output.output, metadata: output.metadata },
        });
        const said = [notes.get(input.callID), reply && (reply.note || reply.reason)].filter(Boolean);
        notes.delete(input.callID);
        if (said.length > 0 && typeof output.output === "string") output.output += "\\n\\n" + said.join("\\n");
      } catch (error) {
        loud("a tool call's result", error);
      }
    },
    event: async ({ event }) => {
      const p = event.properties || {};
      try {
        if (event.type === "session.created" && p.info) {
          await call("session.start", p.info.id);
        } else if (event.type === "message.updated" && p.info && p.info.role === "assistant") {
          const m = p.info;
          if (!m.time || !m.time.completed || counted.has(m.id)) return;
          counted.add(m.id);
          await call("usage", m.sessionID, { message: { id: m.id, tokens: m.tokens, cost: m.cost, modelID: m.modelID } });
        }
      } catch (error) {
        loud("an event (" + event.type + ")", error);
      }
    },
  };
};
`;
