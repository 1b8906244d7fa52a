/**
 * A hook daemon that retires because reins was updated hands its http hooks' port to the daemon it starts
 * (src/guard/daemon/handoff.ts), so the tool calls of a Claude Code turn under way never find the port
 * closed; and when the new daemon cannot start, it retires as before and says so once. Real processes: a
 * copy of this install, its daemon started as a hook starts it, its install "updated" by touching a file.
 */
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { hookSecret } from "../src/base/config/hook-secret.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { httpHookToken, portFile } from "../src/guard/daemon/http-port.js";
import { daemonName, logPath, socketPath } from "../src/guard/daemon/paths.js";
import { probeDaemon } from "../src/guard/daemon/probe.js";
import { encodeHeaderValue } from "../src/guard/daemon/protocol.js";
import { spawnDaemon } from "../src/guard/daemon/start.js";
import { daemonCall } from "#test/daemon-call.js";
import { alive, exits, stopHookDaemons } from "#test/processes.js";

const repo = join(import.meta.dirname, "..");
const temps: string[] = [];
const temp = (prefix: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
};
const envs: NodeJS.ProcessEnv[] = [];

afterEach(async () => {
  for (const env of envs.splice(0)) await stopHookDaemons(env);
});
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** A copy of this install (its bin, built code and package.json; node_modules linked): its own daemon. */
function install(): string {
  const dir = temp("reins-ho-install-");
  cpSync(join(repo, "bin"), join(dir, "bin"), { recursive: true });
  cpSync(join(repo, "dist"), join(dir, "dist"), {
    recursive: true,
    filter: (path) => !path.startsWith(join(repo, "dist", "web")) && !path.endsWith(".map"),
  });
  cpSync(join(repo, "package.json"), join(dir, "package.json"));
  symlinkSync(realpathSync(join(repo, "node_modules")), join(dir, "node_modules"));
  return dir;
}

/** Updates the install in `dir` as far as its daemon can tell: one of its stamped files changes. */
function update(dir: string): void {
  const later = new Date(Date.now() + 5_000);
  utimesSync(join(dir, "dist", "hook.cjs"), later, later);
}

/** The daemon of the install in `dir`, started as a hook starts it, with a turn open in `root`. */
async function daemonOf(dir: string, root: string, variables = "") {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: temp("reins-ho-home-"),
    REINS_RUNTIME_DIR: temp("reins-ho-rt-"),
    REINS_STATE_DIR: temp("reins-ho-state-"),
    // Checked every 500 ms; an open turn keeps it from retiring for idleness.
    REINS_DAEMON_IDLE: "2s",
  };
  envs.push(env);
  const bin = join(dir, "bin", "reins.js");
  const name = daemonName(bin);
  const socket = socketPath(env, name);
  expect(spawnDaemon({ bin, name, env })).toBe(true);
  let status = null;
  for (let i = 0; i < 200 && status?.httpPort === undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    status = await probeDaemon(socket, 500);
  }
  if (status?.httpPort === undefined) throw new Error(`no daemon came up:\n${log(env, name)}`);
  const prompt = { session_id: "s", hook_event_name: "UserPromptSubmit", prompt: "go", cwd: root };
  const opened = await daemonCall(socket, prompt, { root, secret: hookSecret(root), env: variables });
  expect(opened.status).toBe(200);
  return { env, name, socket, pid: status.pid, port: status.httpPort };
}

const log = (env: NodeJS.ProcessEnv, name: string) => {
  try {
    return readFileSync(logPath(env, name), "utf8");
  } catch {
    return "";
  }
};

/** The pids of the daemons of the install in `dir` that run (from /proc). */
function daemonPids(dir: string): number[] {
  const bin = join(dir, "bin", "reins.js");
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry) && alive(Number(entry)))
    .filter((entry) => {
      try {
        const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
        return args.includes(bin) && args.includes("daemon");
      } catch {
        return false; // exited meanwhile
      }
    })
    .map(Number);
}

function project(): string {
  const dir = temp("reins-ho-project-");
  writeFileSync(join(dir, "reins.config.json"), "{}");
  hookSecret(dir);
  return dir;
}

/** What became of one http hook call. */
type Outcome = { status: number; body: string } | { error: string };

/**
 * One PreToolUse over Claude Code's http hook, on `agent`'s kept-alive connection, sent once: a call
 * refused, or reset on a connection the daemon closed under it, is an error.
 */
function post(agent: Agent, port: number, root: string, n: number): Promise<Outcome> {
  const body = JSON.stringify({
    session_id: "s",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: `echo ${n}` },
    cwd: root,
  });
  return new Promise((resolve) => {
    const req = request(
      {
        agent,
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/hooks/claude",
        headers: {
          "content-type": "application/json",
          "X-Reins-Root": encodeHeaderValue(root),
          Authorization: `Bearer ${httpHookToken(hookSecret(root), root)}`,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    // A call nobody answers fails here rather than hang the test.
    req.setTimeout(5_000, () => req.destroy(new Error("no answer within 5 s")));
    req.end(body);
  });
}

async function requested(db: string, session: string): Promise<number> {
  const store = new SqliteStore(db);
  try {
    return (await store.events(`session:${session}`)).filter((r) => r.event.kind === "tool.requested").length;
  } finally {
    await store.close();
  }
}

describe("a daemon retiring because reins was updated", () => {
  it("hands its http hooks' port to the new daemon: every call of a turn under way is answered, with the session's variables", async () => {
    const dir = install();
    const root = project();
    const elsewhere = join(temp("reins-ho-store-"), "session.db");
    const variables = `REINS_STORE=${encodeHeaderValue(`sqlite:${elsewhere}`)}`;
    const old = await daemonOf(dir, root, variables);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const outcomes: Outcome[] = [];
    let streaming = true;
    const stream = (async () => {
      for (let n = 0; streaming; n++) outcomes.push(await post(agent, old.port, root, n));
    })();
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      update(dir);
      // A hook that starts a daemon at the same moment: the one it starts finds a daemon answering and exits.
      expect(spawnDaemon({ bin: join(dir, "bin", "reins.js"), name: old.name, env: old.env })).toBe(true);
      let now = await probeDaemon(old.socket, 500);
      for (let i = 0; i < 250 && (now === null || now.pid === old.pid); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        now = await probeDaemon(old.socket, 500);
      }
      expect(now?.pid ?? old.pid, log(old.env, old.name)).not.toBe(old.pid);
      expect(await exits(old.pid, 5_000), "the old daemon exits").toBe(true);
      // The turn goes on with the new daemon.
      const handedAt = outcomes.length;
      for (const end = Date.now() + 5_000; outcomes.length < handedAt + 20 && Date.now() < end;)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(outcomes.length).toBeGreaterThanOrEqual(handedAt + 20);
    } finally {
      streaming = false;
      await stream;
      agent.destroy();
    }
    // Every call answered by a daemon, none refused, none reset (not even once: no retry is needed), at the
    // port recorded.
    const failures = outcomes.filter((o) => !("status" in o) || o.status !== 200);
    expect(failures, log(old.env, old.name)).toEqual([]);
    const status = await probeDaemon(old.socket, 500);
    expect(status?.httpPort).toBe(old.port);
    expect(readFileSync(portFile(old.env, old.name), "utf8").trim()).toBe(String(old.port));
    // Each call was answered with the store the session's command hook named, also after the handoff.
    expect(await requested(elsewhere, "s")).toBe(outcomes.length);
    expect(await requested(join(root, ".reins", "reins.db"), "s")).toBe(0);
    expect(log(old.env, old.name)).toMatch(
      new RegExp(`daemon ${old.pid} stopped: reins was updated or rebuilt; daemon ${status?.pid} took over`),
    );
    // One daemon is left, the new one.
    let left = daemonPids(dir);
    for (const end = Date.now() + 5_000; left.length > 1 && Date.now() < end; left = daemonPids(dir))
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(left).toEqual([status?.pid]);
    expect(log(old.env, old.name)).toMatch(/already running/);
  }, 30_000);

  it("retires as before when the new daemon cannot start, and says so in one line of its log", async () => {
    const dir = install();
    const root = project();
    const old = await daemonOf(dir, root);
    // The update left a reins that does not start.
    writeFileSync(join(dir, "bin", "reins.js"), "process.exit(1);\n");
    update(dir);
    expect(await exits(old.pid, 10_000), "the old daemon exits").toBe(true);
    const lines = log(old.env, old.name).split("\n");
    expect(lines.filter((line) => /could not hand the http hooks' port/.test(line))).toEqual([
      expect.stringMatching(
        /the new daemon exited \(code 1\) before it listened\); the next hook starts one$/,
      ),
    ]);
    expect(
      lines.some((line) => /stopped: reins was updated or rebuilt; the next hook starts/.test(line)),
    ).toBe(true);
    expect(await probeDaemon(old.socket, 500)).toBeNull();
    const agent = new Agent({ keepAlive: false });
    expect(await post(agent, old.port, root, 0)).toEqual({ error: "ECONNREFUSED" });
  }, 30_000);

  it("kills a new daemon that does not listen within 5 s, and retires as before", async () => {
    const dir = install();
    const root = project();
    const old = await daemonOf(dir, root);
    // The update left a reins whose daemon hangs at its start.
    writeFileSync(join(dir, "bin", "reins.js"), "setInterval(() => {}, 1_000);\n");
    update(dir);
    // The new daemon runs (it is found by its command line), and does not listen.
    let hung: number[] = [];
    for (const end = Date.now() + 5_000; hung.length === 0 && Date.now() < end;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      hung = daemonPids(dir).filter((pid) => pid !== old.pid);
    }
    try {
      expect(hung).toHaveLength(1);
      expect(await exits(old.pid, 10_000), "the old daemon exits").toBe(true);
      expect(daemonPids(dir), "the new daemon was killed").toEqual([]);
      expect(log(old.env, old.name)).toMatch(
        /could not hand the http hooks' port to a new daemon \(the new daemon did not listen within 5000 ms\)/,
      );
    } finally {
      // Only when the test failed: no process of it is left behind.
      for (const pid of daemonPids(dir)) process.kill(pid, "SIGKILL");
    }
  }, 30_000);
});
