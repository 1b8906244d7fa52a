/**
 * The user's hook daemon: one process answering the hooks of every project over a private Unix socket,
 * each call proven by its project's secret and answered from that project's store; the clients that reach
 * it (compiled, and sh + curl); how it starts, steps aside, takes a dead socket over, retires and exits.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hookClients } from "#test/hook-clients.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { REINS_BIN } from "../src/base/config/package-info.js";
import { startHookDaemon, type HookDaemon } from "../src/guard/daemon/hook-daemon.js";
import { listDaemons } from "../src/guard/daemon/list.js";
import { daemonName, socketPath } from "../src/guard/daemon/paths.js";
import { probeDaemon, socketRequest } from "../src/guard/daemon/probe.js";
import { encodeHeaderValue } from "../src/guard/daemon/protocol.js";
import { daemonCall } from "#test/daemon-call.js";
import { hookSecret } from "../src/base/config/hook-secret.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { failed, failing } from "#test/daemon-inputs.js";

const temps: string[] = [];
const temp = (prefix: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
};
const daemons: HookDaemon[] = [];
const runtimes: string[] = [];

/** A private runtime folder for one test's daemons, whose daemons are stopped after the test. */
function runtime(): string {
  const dir = temp("reins-rt-");
  runtimes.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.close("test over")));
  for (const dir of runtimes.splice(0)) {
    for (const entry of await listDaemons({ REINS_RUNTIME_DIR: dir }))
      if (entry.running) {
        await socketRequest(entry.socket, "POST", "/stop", 2_000);
        for (let i = 0; i < 100 && (await probeDaemon(entry.socket, 200)) !== null; i++)
          await new Promise((resolve) => setTimeout(resolve, 20));
      }
  }
});

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function project(config: object = {}): string {
  const dir = temp("reins-hd-project-");
  writeFileSync(join(dir, "reins.config.json"), JSON.stringify(config));
  hookSecret(dir);
  return dir;
}

/** One hook call over the socket, as the clients make it (see support/daemon-call.ts). */
const call = (
  socket: string,
  body: unknown,
  headers: { root: string; secret: string; env?: string; protocol?: string },
  agent = "claude",
) => daemonCall(socket, body, headers, agent);

async function start(socket: string, extra: Partial<Parameters<typeof startHookDaemon>[0]> = {}) {
  const started = await startHookDaemon({ socket, bin: REINS_BIN, version: "test", ...extra });
  if (started.kind !== "listening") throw new Error("another daemon answers");
  daemons.push(started.daemon);
  return started.daemon;
}

async function recordedSeq(root: string, session: string, db = join(root, ".reins", "reins.db")) {
  const store = new SqliteStore(db);
  try {
    return (await store.state(`session:${session}`))?.seq ?? 0;
  } finally {
    await store.close();
  }
}

/** Five identical failing calls, each failure reported: the answers to the five requests. */
async function failFiveTimes(socket: string, root: string, session: string) {
  const secret = hookSecret(root);
  const answers = [];
  for (let i = 0; i < 5; i++) {
    answers.push(await call(socket, failing(session, root), { root, secret }));
    if (i < 4) await call(socket, failed(session, root), { root, secret });
  }
  return answers;
}

describe("the user's hook daemon", () => {
  it("answers the hooks of two projects at once, each in its own store", async () => {
    const socket = join(runtime(), "d.sock");
    await start(socket);
    const [a, b] = [project(), project()];
    const [fromA, fromB] = await Promise.all([
      failFiveTimes(socket, a, "session-a"),
      failFiveTimes(socket, b, "session-b"),
    ]);
    for (const answers of [fromA, fromB]) {
      expect(answers.every((r) => r.status === 200)).toBe(true);
      expect(answers[0]?.json).toEqual({});
      expect(answers[4]?.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    }
    expect(await recordedSeq(a, "session-a")).toBe(9);
    expect(await recordedSeq(a, "session-b")).toBe(0);
    expect(await recordedSeq(b, "session-b")).toBe(9);
    expect(await recordedSeq(b, "session-a")).toBe(0);
  });

  it("refuses a call made with another project's secret, recording nothing", async () => {
    const socket = join(runtime(), "d.sock");
    await start(socket);
    const [a, b] = [project(), project()];
    const wrong = await call(socket, failing("stolen", a), { root: a, secret: hookSecret(b) });
    expect(wrong.status).toBe(401);
    expect(await recordedSeq(a, "stolen")).toBe(0);
    // A project whose secret was made anew is accepted with the new one.
    rmSync(join(a, ".reins", "hook-secret"));
    const renewed = hookSecret(a);
    expect((await call(socket, failing("renewed", a), { root: a, secret: renewed })).status).toBe(200);
  });

  it("refuses another protocol, a root that is not an absolute normal path, and malformed variables", async () => {
    const socket = join(runtime(), "d.sock");
    await start(socket);
    const root = project();
    const secret = hookSecret(root);
    const body = failing("bad", root);
    expect((await call(socket, body, { root, secret, protocol: "0" })).status).toBe(400);
    expect((await call(socket, body, { root: "relative/path", secret })).status).toBe(400);
    expect((await call(socket, body, { root: `${root}/../${root.split("/").pop()}`, secret })).status).toBe(
      400,
    );
    expect((await call(socket, body, { root, secret, env: "REINS_STORE" })).status).toBe(400);
    expect(await recordedSeq(root, "bad")).toBe(0);
    // Hostile names in the variables are dropped, and the call is answered.
    const hostile = await call(socket, body, { root, secret, env: "__proto__=x&constructor=y" });
    expect(hostile.status).toBe(200);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("answers with the store the session's REINS_STORE names, as the hook in-process would", async () => {
    const socket = join(runtime(), "d.sock");
    await start(socket);
    const root = project();
    const elsewhere = join(temp("reins-hd-store-"), "other.db");
    const env = `REINS_STORE=${encodeHeaderValue(`sqlite:${elsewhere}`)}`;
    const answer = await call(socket, failing("routed", root), { root, secret: hookSecret(root), env });
    expect(answer.status).toBe(200);
    expect(await recordedSeq(root, "routed", elsewhere)).toBe(1);
    expect(await recordedSeq(root, "routed")).toBe(0);
  });

  it("applies an edit of the project's policy without a restart", async () => {
    const socket = join(runtime(), "d.sock");
    await start(socket, { projects: { policyCheckMs: 0 } });
    const root = project();
    expect(JSON.stringify((await failFiveTimes(socket, root, "before"))[2]?.json)).not.toContain("deny");
    writeFileSync(join(root, "reins.config.json"), JSON.stringify({ circuit: { duplicateThreshold: 3 } }));
    const answers = await failFiveTimes(socket, root, "after");
    expect(answers[2]?.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("takes over a socket left by a dead daemon or held by another program, and steps aside for a live daemon", async () => {
    const dir = runtime();
    const socket = join(dir, "d.sock");
    // Another program listening on the path: it answers, but not as a reins daemon.
    const squatter = createNetServer((c) => c.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno"));
    await new Promise<void>((resolve) => squatter.listen(socket, resolve));
    try {
      const daemon = await start(socket);
      expect((await probeDaemon(socket))?.pid).toBe(process.pid);
      // A second daemon on the same socket finds the first and does not start.
      const second = await startHookDaemon({ socket, bin: REINS_BIN, version: "test" });
      expect(second.kind).toBe("running");
      await daemon.close("test");
      expect(existsSync(socket)).toBe(false);
    } finally {
      squatter.close();
    }
    // A socket file with nobody behind it (a daemon that was killed).
    const dead = createNetServer();
    await new Promise<void>((resolve) => dead.listen(socket, resolve));
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    writeFileSync(join(dir, "marker"), "");
    await start(socket);
    expect(await probeDaemon(socket)).not.toBeNull();
  });

  it("exits once no hook called for its idle time, releasing its socket", async () => {
    const socket = join(runtime(), "d.sock");
    const daemon = await start(socket, { idleMs: 300, checkMs: 50 });
    const root = project();
    await call(socket, failing("idle", root), { root, secret: hookSecret(root) });
    expect(await daemon.closed).toMatch(/no hook called for/);
    expect(existsSync(socket)).toBe(false);
  });

  it("with Claude Code's http hooks on, stays while a turn is open (its calls would go unjudged), then retires", async () => {
    const socket = join(runtime(), "d.sock");
    const daemon = await start(socket, { idleMs: 300, checkMs: 50, http: true });
    expect((await probeDaemon(socket))?.httpPort).toBeGreaterThan(0);
    const root = project();
    const headers = { root, secret: hookSecret(root) };
    const prompt = { session_id: "turn", hook_event_name: "UserPromptSubmit", prompt: "go", cwd: root };
    await call(socket, prompt, headers);
    // Four idle times with no call: a long command of the turn is running.
    let closed: string | null = null;
    void daemon.closed.then((reason) => (closed = reason));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(closed).toBeNull();
    expect(await probeDaemon(socket)).not.toBeNull();
    // The turn ends: the idle time counts again.
    await call(socket, { session_id: "turn", hook_event_name: "Stop", cwd: root }, headers);
    expect(await daemon.closed).toMatch(/no hook called for/);
  });

  it("retires when reins is updated, and when another daemon took its socket", async () => {
    const socket = join(runtime(), "d.sock");
    let stamp = "1";
    const updated = await start(socket, { stamp: () => stamp, checkMs: 50 });
    stamp = "2";
    expect(await updated.closed).toMatch(/updated or rebuilt/);
    const first = await start(socket, { checkMs: 50 });
    rmSync(socket);
    const second = await start(socket);
    expect(await first.closed).toMatch(/taken over/);
    // The first left the second's socket in place.
    expect((await probeDaemon(socket))?.pid).toBe(process.pid);
    await second.close("test");
  });
});

/** Runs a hook client with `input` on stdin in `cwd` with `env`. */
function client(
  command: string,
  args: string[],
  input: unknown,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(input));
  });
}

async function waitForDaemon(socket: string) {
  for (let i = 0; i < 200; i++) {
    const status = await probeDaemon(socket, 500);
    if (status !== null) return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no daemon came up on ${socket}`);
}

const clients = hookClients(temp("reins-hd-client-"));
const name = daemonName(REINS_BIN);

describe.each(clients)("%s", (_label, available, commandOf) => {
  it.skipIf(!available)(
    "answers in-process and starts the daemon when none runs, then forwards to it; a deny comes back as the agent's JSON",
    async () => {
      const env = { REINS_RUNTIME_DIR: runtime(), HOME: temp("reins-hd-home-") };
      const socket = socketPath(env, name);
      const root = project();
      const [command, args] = commandOf("claude");
      const first = await client(command, args, failing("c", root), root, env);
      expect(first).toMatchObject({ code: 0, stdout: "" });
      expect(await recordedSeq(root, "c")).toBe(1);
      const status = await waitForDaemon(socket);
      expect(status.calls).toBe(0);
      await client(command, args, failed("c", root), root, env);
      for (let i = 0; i < 3; i++) {
        await client(command, args, failing("c", root), root, env);
        await client(command, args, failed("c", root), root, env);
      }
      const denied = await client(command, args, failing("c", root), root, env);
      expect(JSON.parse(denied.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
      const after = await probeDaemon(socket);
      expect(after?.calls).toBe(8);
      expect(after?.projects.map((p) => p.root)).toEqual([root]);
      expect(await recordedSeq(root, "c")).toBe(9);
    },
  );

  it.skipIf(!available)(
    "takes no answer from another program on the socket, even a 200: answers in-process, and the daemon it starts takes the socket back",
    async () => {
      const env = { REINS_RUNTIME_DIR: runtime(), HOME: temp("reins-hd-home-") };
      const socket = socketPath(env, name);
      const squatter = createNetServer((c) => c.end("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"));
      await new Promise<void>((resolve) => squatter.listen(socket, resolve));
      try {
        const root = project();
        const [command, args] = commandOf("claude");
        const answered = await client(command, args, failing("squat", root), root, env);
        expect(answered).toMatchObject({ code: 0, stdout: "" });
        expect(await recordedSeq(root, "squat")).toBe(1);
        await waitForDaemon(socket);
        await client(command, args, failing("squat", root), root, env);
        expect((await probeDaemon(socket))?.calls).toBe(1);
        expect(await recordedSeq(root, "squat")).toBe(2);
      } finally {
        squatter.close();
      }
    },
  );

  it.skipIf(!available)("finds the project's root from a folder inside it, as reins does", async () => {
    const env = { REINS_RUNTIME_DIR: runtime(), HOME: temp("reins-hd-home-") };
    const root = project();
    const inside = join(root, "src", "deep");
    execFileSync("mkdir", ["-p", inside]);
    const [command, args] = commandOf("codex");
    const input = {
      ...failing("nested", root),
      turn_id: "t1",
      cwd: inside,
      model: "m",
      permission_mode: "default",
      transcript_path: null,
    };
    await client(command, args, input, inside, env);
    await waitForDaemon(socketPath(env, name));
    await client(command, args, input, inside, env);
    expect((await probeDaemon(socketPath(env, name)))?.projects.map((p) => p.root)).toEqual([root]);
    expect(await recordedSeq(root, "nested")).toBe(2);
    expect(existsSync(join(inside, ".reins"))).toBe(false);
  });
});

describe("reins daemon", () => {
  it("status lists the daemon and its projects, stop stops it, and the next hook call starts it again", async () => {
    const env = { REINS_RUNTIME_DIR: runtime(), HOME: temp("reins-hd-home-") };
    const root = project();
    const cli = async (...argv: string[]) => {
      const io = memoryIo({ cwd: root, env });
      const code = await run(argv, io);
      return { code, out: io.out.join(""), err: io.err.join("") };
    };
    expect((await cli("daemon", "status")).out).toMatch(/no reins hook daemon is running/);
    const started = await cli("daemon", "start");
    expect(started.code, started.err).toBe(0);
    expect(started.out).toMatch(/reins hook daemon started \(pid \d+\)/);
    const socket = socketPath(env, name);
    await call(socket, failing("listed", root), { root, secret: hookSecret(root) });
    const listed = await cli("daemon", "status");
    expect(listed.out).toContain(`${name}: pid`);
    expect(listed.out).toContain("(this reins)");
    expect(listed.out).toContain(root);
    // The same report, its figures aside (a second may pass between the two).
    const figures = (text: string) => text.replace(/\d+(\.\d+)? (s|min|h|MB)\b/g, "N $2");
    expect(figures((await cli("status", "--daemons")).out)).toBe(figures(listed.out));
    const json = JSON.parse((await cli("status", "--daemons", "--json")).out) as {
      running: boolean;
      status: { projects: { root: string }[] };
    }[];
    expect(json.map((d) => d.running && d.status.projects.map((p) => p.root))).toEqual([[root]]);
    expect((await cli("daemon", "stop")).out).toMatch(new RegExp(`stopped ${name}`));
    for (let i = 0; i < 100 && existsSync(socket); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(socket)).toBe(false);
    expect((await cli("daemon", "status")).out).toMatch(/no reins hook daemon is running/);
  });
});
