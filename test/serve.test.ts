import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { scripted, startApi, type ApiServer } from "#test/api-server.js";
import { freePort } from "#test/free-port.js";

/** `reins serve` as a real process, and remote hooks (`REINS_SERVER_URL`) against a real server. */

const bin = join(import.meta.dirname, "..", "bin", "reins.js");
const children: ChildProcess[] = [];
const servers: ApiServer[] = [];

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const s of servers) await s.close().catch(() => undefined);
});

function project(config: object = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-serve-"));
  writeFileSync(join(dir, "reins.config.json"), JSON.stringify(config));
  return dir;
}

/** Starts `reins serve` on a free port; resolves once it prints its address. */
function serve(cwd: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      const url = /serving (http:\/\/[\d.:]+)/.exec(stdout)?.[1]?.replace("0.0.0.0", "127.0.0.1");
      if (url !== undefined && stdout.includes("\n")) setTimeout(() => resolve(url), 50);
    });
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, ready, exited, output: () => stdout, errors: () => stderr };
}

describe("reins serve", () => {
  it("uses the store --store names, and the start-up line says where it listens", async () => {
    const dir = project();
    const server = serve(dir, ["--store", "sqlite:elsewhere.db"]);
    const url = await server.ready;
    expect(server.output()).toContain(`store: ${join(dir, "elsewhere.db")}`);
    expect(existsSync(join(dir, "elsewhere.db"))).toBe(true);
    expect(existsSync(join(dir, ".reins", "reins.db"))).toBe(false);
    const health = (await (await fetch(`${url}/healthz`)).json()) as { store: string };
    expect(health.store).toBe("sqlite");
    server.child.kill("SIGTERM");
    await server.exited;

    const star = serve(dir, ["--cors", "https://ops.example.com,*"]);
    star.ready.catch(() => undefined); // it never gets ready: it refuses to start
    expect(await star.exited).toBe(2);
    expect(star.errors()).toMatch(/^reins: --cors: name the origins that may call the API/);

    const open = serve(dir, ["--host", "0.0.0.0"]);
    await open.ready.catch(() => undefined);
    expect(open.output()).toMatch(/^reins serving http:\/\/0\.0\.0\.0:\d+ /);
    open.child.kill("SIGTERM");
    await open.exited;
  });

  it("creates the two tokens once (mode 0600), prints the people's once, and accepts --token instead", async () => {
    const dir = project();
    const first = serve(dir);
    await first.ready;
    const path = join(dir, ".reins", "api-token");
    const token = readFileSync(path, "utf8").trim();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(first.output()).toContain(token);
    const agentsPath = join(dir, ".reins", "agent-token");
    const agents = readFileSync(agentsPath, "utf8").trim();
    expect(agents.length).toBeGreaterThanOrEqual(32);
    expect(agents).not.toBe(token);
    expect(statSync(agentsPath).mode & 0o777).toBe(0o600);
    expect(first.output()).toContain(agentsPath);
    expect(first.output()).not.toContain(agents);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const second = serve(dir);
    const url = await second.ready;
    expect(second.output()).not.toContain(token);
    const ok = await fetch(`${url}/api/budgets/x/reset`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ reason: "probe" }),
    });
    expect(ok.status).toBe(404); // authorised; there is no such budget
    const asAgent = (path: string, body: object) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${agents}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await asAgent("/api/budgets/x/reset", { reason: "probe" })).status).toBe(403);
    const events = scripted("session:s", (t) => t.started("claude").read("a.ts"));
    expect((await asAgent("/api/events", { events })).status).toBe(200);
    second.child.kill("SIGTERM");
    await second.exited;

    const own = "a-token-chosen-by-the-operator";
    const third = serve(dir, [], { REINS_TOKEN: own });
    const url3 = await third.ready;
    const byEnv = await fetch(`${url3}/api/budgets/x/reset`, {
      method: "POST",
      headers: { authorization: `Bearer ${own}`, "content-type": "application/json" },
      body: JSON.stringify({ reason: "probe" }),
    });
    expect(byEnv.status).toBe(404);
    third.child.kill("SIGTERM");
    await third.exited;
  });

  it("comes up while its Redis store is down, and answers hooks fail-open with the events spooled", async () => {
    const dir = project({ store: `redis://127.0.0.1:${await freePort()}` });
    const server = serve(dir);
    const url = await server.ready;
    expect((await fetch(`${url}/healthz`)).status).toBe(503);
    const secret = readFileSync(join(dir, ".reins", "hook-secret"), "utf8").trim();
    const answer = await fetch(`${url}/hooks/claude`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({
        session_id: "s1",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
        cwd: dir,
      }),
    });
    expect(answer.status).toBe(200);
    expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  it("exits with one line when its port is taken, instead of staying alive without listening; its own server is named as such", async () => {
    const redis = project({ store: `redis://127.0.0.1:${await freePort()}` });
    const first = serve(redis);
    const port = new URL(await first.ready).port;
    const second = spawn(process.execPath, [bin, "serve", "--port", port], { cwd: redis, stdio: "pipe" });
    children.push(second);
    let err = "";
    second.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => second.on("close", resolve));
    expect(code).toBe(2);
    expect(err).toMatch(
      /^reins: this project's server already runs on http:\/\/127\.0\.0\.1:\d+\/ .*nothing to start\n$/,
    );
    // Another project on the same port: another program, as far as this project goes.
    const other = project();
    const third = spawn(process.execPath, [bin, "serve", "--port", port], { cwd: other, stdio: "pipe" });
    children.push(third);
    let otherErr = "";
    third.stderr.on("data", (c: Buffer) => (otherErr += c.toString()));
    expect(await new Promise<number | null>((resolve) => third.on("close", resolve))).toBe(2);
    expect(otherErr).toMatch(
      /^reins: 127\.0\.0\.1:\d+ is taken by another program or another project's reins server: choose another --port \(or --port 0 for any free one\)\n$/,
    );
    first.child.kill("SIGTERM");
    await first.exited;
  });

  it("on SIGTERM finishes the request in flight, ends event streams, closes the store and exits 0", async () => {
    const dir = project();
    const server = serve(dir, ["--token", "graceful-shutdown-token"]);
    const url = new URL(await server.ready);
    const stream = await fetch(`${url.origin}/api/stream`);
    const streamEnded = stream.text();

    const events = scripted("session:graceful", (t) => {
      t.started("claude");
      for (let i = 0; i < 300; i++) t.usage({ inputTokens: 10 });
    });
    const body = Buffer.from(JSON.stringify({ events }));
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: "/api/events",
          method: "POST",
          headers: {
            authorization: "Bearer graceful-shutdown-token",
            "content-type": "application/json",
            "content-length": body.length,
          },
        },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      // Half the body, then the signal, then the rest: the request is in flight when the server is told to stop.
      req.write(body.subarray(0, body.length / 2));
      setTimeout(() => {
        server.child.kill("SIGTERM");
        setTimeout(() => req.end(body.subarray(body.length / 2)), 200);
      }, 200);
    });

    const done = await answer;
    expect(done.status).toBe(200);
    expect(JSON.parse(done.text)).toMatchObject({ accepted: 301 });
    await streamEnded;
    expect(await server.exited).toBe(0);
    expect(existsSync(join(dir, ".reins", "serve.pid"))).toBe(false);

    const db = new Database(join(dir, ".reins", "reins.db"), { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });
});

interface HookReply {
  hookSpecificOutput: { permissionDecision?: string; permissionDecisionReason?: string };
}

/** Runs `reins hook claude` as the agent would, in a project on another "machine". */
function hook(cwd: string, env: NodeJS.ProcessEnv, payload: object) {
  const child = spawn(process.execPath, [bin, "hook", "claude"], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(JSON.stringify(payload));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise<{ code: number | null; reply: HookReply | null; stderr: string }>((resolve) =>
    child.on("close", (code) =>
      resolve({ code, reply: stdout.trim() === "" ? null : JSON.parse(stdout), stderr }),
    ),
  );
}

/** The n-th Claude Code PreToolUse of one failing command in `session`, and its PostToolUseFailure. */
function failingCall(session: string, cwd: string) {
  const call = (n: number) => ({
    session_id: session,
    transcript_path: "",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "node migrate.js" },
    tool_use_id: `call-${n}`,
  });
  const failed = (n: number) => ({
    ...call(n),
    hook_event_name: "PostToolUseFailure",
    error: "Exit code 1\nECONNREFUSED",
  });
  return { call, failed };
}

describe("remote hooks (REINS_SERVER_URL)", () => {
  it("decide on the shared server; while it is down they allow with a warning and spool; then it drains exactly once", async () => {
    const api = await startApi();
    servers.push(api);
    const port = Number(new URL(api.url).port);
    const agentMachine = project();
    const env = { REINS_SERVER_URL: api.url, REINS_TOKEN: api.token, REINS_SERVER_TIMEOUT_MS: "1000" };
    const { call, failed } = failingCall("remote-1", agentMachine);

    // The same failing command again and again: the server's guards deny it.
    const replies = [];
    for (let n = 1; n <= 5; n++) {
      replies.push(await hook(agentMachine, env, call(n)));
      await hook(agentMachine, env, failed(n));
    }
    expect(replies.every((r) => r.code === 0)).toBe(true);
    expect(replies[0]!.reply).toBeNull();
    expect(replies[4]!.reply?.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(replies[4]!.reply?.hookSpecificOutput.permissionDecisionReason).toContain("node migrate.js");
    // Nothing was stored on the agent's machine: the server holds the session.
    expect(existsSync(join(agentMachine, ".reins", "reins.db"))).toBe(false);
    const before = await api.services.store.state("session:remote-1");
    expect(before?.seq).toBe(10);

    // The server goes away: allow, one warning line, the events kept.
    await api.close();
    servers.length = 0;
    const down = await hook(agentMachine, env, { ...call(6), tool_input: { command: "ls" } });
    expect(down.code).toBe(0);
    expect(down.reply).toBeNull();
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toMatch(/unreachable.*allowing/);
    expect(readdirSync(join(agentMachine, ".reins", "spool")).length).toBeGreaterThan(0);

    // Back on the same port and store: the next hook call delivers the spooled event first, once.
    const back = await startApi({ project: api.project, port });
    servers.push(back);
    await hook(agentMachine, env, { ...call(7), tool_input: { command: "pwd" } });
    await hook(agentMachine, env, { ...call(8), tool_input: { command: "pwd" } });
    const log = await back.services.store.events("session:remote-1", { limit: 1_000 });
    const commands = log
      .filter((r) => r.event.kind === "tool.requested")
      .map((r) => (r.event as { command?: string }).command);
    expect(commands.filter((c) => c === "ls")).toHaveLength(1);
    expect(commands.filter((c) => c === "pwd")).toHaveLength(2);
    expect(log).toHaveLength(13);
  });

  it("fail over past a server that hangs and one that is gone to the next listed, within their timeout", async () => {
    const api = await startApi();
    servers.push(api);
    // A server that accepts connections and never answers, and a port nobody listens on.
    const hung = createServer(() => undefined);
    let hungTried = 0;
    hung.on("connection", () => (hungTried += 1));
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const gonePort = (gone.address() as AddressInfo).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    try {
      const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
      const agentMachine = project();
      const env = {
        REINS_SERVER_URL: `${hungUrl}, http://127.0.0.1:${gonePort}, ${api.url}`,
        REINS_TOKEN: api.token,
        REINS_SERVER_TIMEOUT_MS: "3000",
      };
      const { call, failed } = failingCall("fleet-1", agentMachine);
      const replies = [];
      let afterFirst = 0;
      for (let n = 1; n <= 5; n++) {
        replies.push(await hook(agentMachine, env, call(n)));
        if (n === 1) afterFirst = hungTried;
        await hook(agentMachine, env, failed(n));
      }
      // Every call was decided by the live server: no warning, nothing spooled, the 5th identical
      // failing call denied as the server's guards decide.
      expect(replies.map((r) => [r.code, r.stderr])).toEqual(replies.map(() => [0, ""]));
      expect(replies[4]!.reply?.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(existsSync(join(agentMachine, ".reins", "spool"))).toBe(false);
      expect((await api.services.store.state("session:fleet-1"))?.seq).toBe(10);
      // Only the first hook process waited on the hanging server: the project remembers which answered.
      expect(afterFirst).toBeGreaterThan(0);
      expect(hungTried).toBe(afterFirst);
      expect(readFileSync(join(agentMachine, ".reins", "server-answered"), "utf8")).toBe(api.url);
    } finally {
      hung.closeAllConnections();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    }
  });

  it("a wrong token is refused, reported in one line, and the call is allowed", async () => {
    const api = await startApi();
    servers.push(api);
    const dir = project();
    const r = await hook(
      dir,
      { REINS_SERVER_URL: api.url, REINS_TOKEN: "not-the-token" },
      {
        session_id: "wrong-token",
        cwd: dir,
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
      },
    );
    expect(r.code).toBe(0);
    expect(r.reply).toBeNull();
    expect(r.stderr).toContain("refused the token");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
