/**
 * Claude Code's http hooks to the user's hook daemon: its loopback port recorded once, each call proven by
 * the project's http hook token, answered from the project's store with its session's variables; a port
 * held by another program given up for another, and the project's settings following it.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startHookDaemon, type HookDaemon } from "../../src/guard/daemon/hook-daemon.js";
import { derivedPort, hookPort, httpHookToken, recordedPort } from "../../src/guard/daemon/http-port.js";
import { encodeHeaderValue } from "../../src/guard/daemon/protocol.js";
import { daemonHttpHooks } from "../../src/install/daemon-http.js";
import { hookSecret } from "../../src/base/config/hook-secret.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";
import { daemonCall } from "#test/daemon-call.js";

const temps: string[] = [];
const temp = (prefix: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
};
const daemons: HookDaemon[] = [];
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.close("test over")));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function project(): string {
  const dir = temp("reins-dh-project-");
  writeFileSync(join(dir, "reins.config.json"), "{}");
  hookSecret(dir);
  return dir;
}

async function daemon(runtime: string): Promise<{ daemon: HookDaemon; port: number; socket: string }> {
  const socket = join(runtime, "d-0badf00d.sock");
  const started = await startHookDaemon({ socket, bin: "/nonexistent/reins.js", version: "test" });
  if (started.kind !== "listening") throw new Error("a daemon already answered");
  daemons.push(started.daemon);
  const port = started.daemon.status().httpPort;
  if (port === undefined) throw new Error("no http port");
  return { daemon: started.daemon, port, socket };
}

function post(
  port: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method: "POST", path: "/hooks/claude", headers },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const tokenHeaders = (root: string) => ({
  "content-type": "application/json",
  "X-Reins-Root": encodeHeaderValue(root),
  Authorization: `Bearer ${httpHookToken(hookSecret(root), root)}`,
});

const pre = (session: string, root: string, command: string) => ({
  session_id: session,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command },
  cwd: root,
});

describe("the daemon's http hooks", () => {
  it("answers a call with the project's token from the project's store, at the recorded port", async () => {
    const runtime = temp("reins-dh-rt-");
    const root = project();
    const { port } = await daemon(runtime);
    expect(port).toBe(derivedPort({ REINS_RUNTIME_DIR: runtime }, "d-0badf00d"));
    expect(recordedPort({ REINS_RUNTIME_DIR: runtime }, "d-0badf00d")).toBe(port);
    const answer = await post(port, pre("s1", root, "echo hi"), tokenHeaders(root));
    expect(answer).toEqual({ status: 200, json: {} });
    const store = new SqliteStore(join(root, ".reins", "reins.db"));
    try {
      expect((await store.events("session:s1")).map((r) => r.event.kind)).toContain("tool.requested");
    } finally {
      await store.close();
    }
  });

  it("refuses a call without the project's token, for another project, or by another Host", async () => {
    const runtime = temp("reins-dh-rt-");
    const root = project();
    const other = project();
    const { port } = await daemon(runtime);
    const body = pre("s2", root, "echo hi");
    expect((await post(port, body, { ...tokenHeaders(root), Authorization: "Bearer nope" })).status).toBe(
      401,
    );
    const crossed = { ...tokenHeaders(other), "X-Reins-Root": encodeHeaderValue(root) };
    expect((await post(port, body, crossed)).status).toBe(401);
    expect((await post(port, body, { ...tokenHeaders(root), Host: `evil.example:${port}` })).status).toBe(
      421,
    );
    // The hook secret itself is not the token: the token proves this project's hook and nothing more.
    const secret = { ...tokenHeaders(root), Authorization: `Bearer ${hookSecret(root)}` };
    expect((await post(port, body, secret)).status).toBe(401);
  });

  it("answers a session's http calls with the variables its command hooks brought", async () => {
    const runtime = temp("reins-dh-rt-");
    const root = project();
    const elsewhere = join(temp("reins-dh-store-"), "other.db");
    const { port, socket } = await daemon(runtime);
    const start = { session_id: "s3", hook_event_name: "SessionStart", source: "startup", cwd: root };
    const env = `REINS_STORE=${encodeHeaderValue(`sqlite:${elsewhere}`)}`;
    expect((await daemonCall(socket, start, { root, secret: hookSecret(root), env })).status).toBe(200);
    expect((await post(port, pre("s3", root, "echo hi"), tokenHeaders(root))).status).toBe(200);
    const store = new SqliteStore(elsewhere);
    try {
      expect((await store.events("session:s3")).map((r) => r.event.kind)).toContain("tool.requested");
    } finally {
      await store.close();
    }
  });

  it("moves off a port another program holds, records it, and the project's settings follow at its next start", async () => {
    const runtime = temp("reins-dh-rt-");
    const env = { REINS_RUNTIME_DIR: runtime };
    const root = project();
    const taken = derivedPort(env, "d-0badf00d");
    const squatter = createServer();
    servers.push(squatter);
    await new Promise<void>((resolve) => squatter.listen(taken, "127.0.0.1", resolve));
    mkdirSync(join(root, ".claude"));
    const hooks = daemonHttpHooks(env, root, "/nonexistent/reins.js");
    const settings = join(root, ".claude", "settings.local.json");
    const entry = { type: "http", url: `http://127.0.0.1:${taken}/hooks/claude`, headers: hooks.headers };
    writeFileSync(settings, JSON.stringify({ hooks: { PreToolUse: [{ matcher: "*", hooks: [entry] }] } }));
    const { port, socket } = await daemon(runtime);
    expect(port).not.toBe(taken);
    expect(hookPort(env, "d-0badf00d")).toBe(port);
    const start = { session_id: "s4", hook_event_name: "SessionStart", source: "startup", cwd: root };
    const answer = await daemonCall(socket, start, { root, secret: hookSecret(root) });
    expect(String(answer.json.systemMessage)).toContain(`now post to ${port}`);
    const written = JSON.parse(readFileSync(settings, "utf8")) as {
      hooks: { PreToolUse: { hooks: { url: string }[] }[] };
    };
    expect(written.hooks.PreToolUse[0]?.hooks[0]?.url).toBe(`http://127.0.0.1:${port}/hooks/claude`);
    expect((await post(port, pre("s4", root, "echo hi"), tokenHeaders(root))).status).toBe(200);
  });
});
