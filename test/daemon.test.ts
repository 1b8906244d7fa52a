/** The project server answering hooks over HTTP (`--http`, remote hooks), and the bundled `reins hook` command. */
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServices, type HookServices } from "../src/guard/hooks/hook-call.js";
import { apiToken, hookSecret } from "../src/base/config/hook-secret.js";
import { serverAt, serveStartLock } from "../src/server/server-process.js";
import { createServer } from "../src/server/server.js";
import type { Store } from "../src/base/core/store.js";
import { killPids, servePids } from "#test/fault-daemon.js";
import { freePort } from "#test/free-port.js";

const root = join(import.meta.dirname, "..");
const run = promisify(execFile);

const project = mkdtempSync(join(tmpdir(), "reins-daemon-"));
writeFileSync(join(project, "reins.config.json"), "{}");
let services: HookServices;
let app: FastifyInstance;
let url: string;
let secret: string;
const logged: string[] = [];

beforeAll(async () => {
  services = await openServices(project, {});
  secret = hookSecret(project);
  app = await createServer({
    services,
    secret,
    token: apiToken(project).value,
    host: "127.0.0.1",
    log: (line) => logged.push(line),
  });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  await app.close();
  await services.store.close();
});

const failing = (session: string) => ({
  session_id: session,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "node migrate.js" },
  cwd: project,
});
const failed = (session: string) => ({
  ...failing(session),
  hook_event_name: "PostToolUseFailure",
  error: "Exit code 1\nECONNREFUSED",
});

async function post(body: unknown, token: string | null = secret, agent = "claude") {
  const response = await fetch(`${url}/hooks/${agent}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe("the project's server answering hooks over loopback HTTP", () => {
  it("refuses calls without the project's bearer token", async () => {
    expect((await post(failing("auth"), null)).status).toBe(401);
    expect((await post(failing("auth"), "wrong")).status).toBe(401);
    expect(await services.store.state("session:auth")).toBeNull();
  });

  it("denies the 5th identical failing call in Claude Code's protocol", async () => {
    const replies = [];
    for (let i = 0; i < 5; i++) {
      replies.push((await post(failing("five"))).json);
      if (i < 4) await post(failed("five"));
    }
    expect(replies[0]).toEqual({});
    expect(replies[4]).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
    expect(JSON.stringify(replies[4])).toContain("was made 5 times in a row");
  });

  it("answers malformed bodies with an allow and one logged line, recording nothing", async () => {
    const before = (await services.store.scopes()).length;
    for (const body of ["not json", "", "{}", JSON.stringify({ session_id: "x" })]) {
      const { status, json } = await post(body);
      expect(status).toBe(200);
      expect(json).toEqual({});
    }
    expect(logged.length).toBeGreaterThanOrEqual(4);
    expect(logged.every((l) => !l.includes("\n"))).toBe(true);
    expect((await services.store.scopes()).length).toBe(before);
  });
});

/** Where hook commands run by these tests keep their compiled code (not the user's ~/.cache). */
const codeCache = mkdtempSync(join(tmpdir(), "reins-code-cache-"));

describe("reins hook claude, the bundled command agents run", () => {
  const hook = (input: unknown) =>
    spawnSync(process.execPath, [join(root, "bin", "reins.js"), "hook", "claude"], {
      input: JSON.stringify(input),
      cwd: tmpdir(),
      env: { ...process.env, XDG_CACHE_HOME: codeCache },
      encoding: "utf8",
    });

  it("records from the input's cwd, denies the 5th identical failing call, and caches its compiled code", async () => {
    const first = hook(failing("bundled"));
    expect(first).toMatchObject({ status: 0, stdout: "", stderr: "" });
    expect((await services.store.state("session:bundled"))?.seq).toBe(1);
    expect(readdirSync(join(codeCache, "reins"))).toEqual([expect.stringMatching(/^hook\.cjs-.*\.jsc$/)]);
    await post(failed("bundled"));
    for (let i = 2; i <= 4; i++) {
      expect(hook(failing("bundled")).status).toBe(0);
      await post(failed("bundled"));
    }
    const denied = hook(failing("bundled"));
    expect(denied).toMatchObject({ status: 0, stderr: "" });
    expect(JSON.parse(denied.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    expect(denied.stdout).toContain("was made 5 times in a row");
  });
});

describe("reins hook claude with bad input on stdin", () => {
  const bin = join(root, "bin", "reins.js");
  const cases: [string, Buffer, RegExp][] = [
    ["not JSON", Buffer.from("{oops"), /input is not JSON/],
    ["empty", Buffer.alloc(0), /empty input/],
    ["missing fields", Buffer.from(JSON.stringify({ tool_name: "Bash" })), /missing or has a bad session_id/],
    [
      "an unknown event",
      Buffer.from(JSON.stringify({ session_id: "u", hook_event_name: "Teleport", cwd: project })),
      /^$/,
    ],
    ["17 MB", Buffer.alloc(17 * 1024 * 1024, 0x20), /over the 16777216-byte limit/],
    [
      "invalid UTF-8",
      Buffer.concat([
        Buffer.from('{"session_id":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}'),
      ]),
      /^$/,
    ],
  ];
  // As agents run it (bin/reins.js takes the bundled fast path) and through the CLI (--cwd).
  const commands: [string, string[]][] = [
    ["", [bin, "hook", "claude"]],
    [" (with --cwd)", [bin, "--cwd", project, "hook", "claude"]],
  ];
  for (const [name, input, message] of cases) {
    for (const [how, args] of commands) {
      it(`answers ${name} with exit 0, an allow and at most one line on stderr${how}`, () => {
        const result = spawnSync(process.execPath, args, {
          input,
          cwd: project,
          env: { ...process.env, XDG_CACHE_HOME: codeCache },
          encoding: "utf8",
          maxBuffer: 64 * 1024 * 1024,
        });
        expect(result.status).toBe(0);
        expect(result.stdout).toBe("");
        expect(result.stderr.trim()).toMatch(message);
        expect(result.stderr.trim().split("\n").length).toBeLessThanOrEqual(1);
      });
    }
  }

  it("answers a 10 MB tool input and records it without growing the state", async () => {
    const input = JSON.stringify({
      ...failing("huge"),
      tool_input: { command: "x".repeat(10 * 1024 * 1024) },
    });
    const child = spawnSync(process.execPath, [bin, "--cwd", project, "hook", "claude"], {
      input,
      cwd: project,
      encoding: "utf8",
    });
    expect(child.status).toBe(0);
    expect(child.stderr).toBe("");
    const state = await services.store.state("session:huge");
    expect(state?.seq).toBe(1);
    expect(JSON.stringify(state).length).toBeLessThan(64 * 1024);
  });
});

describe("reins init claude --http", () => {
  it("puts http hooks with the project's secret in settings.local.json and command hooks that start the server", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-init-http-"));
    writeFileSync(join(dir, "reins.config.json"), "{}");
    await run(process.execPath, [
      join(root, "bin", "reins.js"),
      "--cwd",
      dir,
      "init",
      "claude",
      "--http",
      "--port",
      "7999",
    ]);
    const settings = JSON.parse(readFileSync(join(dir, ".claude", "settings.local.json"), "utf8")) as {
      hooks: Record<
        string,
        { hooks: { type: string; url?: string; command?: string; headers?: Record<string, string> }[] }[]
      >;
    };
    const pre = settings.hooks.PreToolUse?.[0]?.hooks[0];
    expect(pre).toMatchObject({
      type: "http",
      url: "http://127.0.0.1:7999/hooks/claude",
      headers: { Authorization: `Bearer ${hookSecret(dir)}` },
    });
    expect(settings.hooks.SessionStart?.[0]?.hooks[0]?.command).toMatch(
      /hook claude --ensure-daemon --port 7999$/,
    );
    await run(process.execPath, [
      join(root, "bin", "reins.js"),
      "--cwd",
      dir,
      "init",
      "claude",
      "--http",
      "--uninstall",
    ]);
    // reins made the file, and nothing else is in it: it is gone.
    expect(existsSync(join(dir, ".claude", "settings.local.json"))).toBe(false);
  });
});

describe("reins hook claude --ensure-daemon (the SessionStart and UserPromptSubmit hooks of --http)", () => {
  const prompt = (dir: string) =>
    JSON.stringify({
      session_id: "s-ensure",
      hook_event_name: "UserPromptSubmit",
      prompt: "go on",
      cwd: dir,
    });
  // Spawned asynchronously: a test's own server on the port must go on answering meanwhile.
  const ensure = (dir: string, port: number) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [join(root, "bin", "reins.js"), "hook", "claude", "--ensure-daemon", "--port", String(port)],
        { cwd: dir, timeout: 30_000 },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.on("close", (status) => resolve({ status, stdout, stderr }));
      child.stdin.end(prompt(dir));
    });
  const contextOf = (stdout: string) =>
    (JSON.parse(stdout) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput
      ?.additionalContext ?? "";

  it("restarts a server that was down and tells the model that calls went unguarded, once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-ensure-"));
    writeFileSync(join(dir, "reins.config.json"), "{}");
    const port = await freePort();
    try {
      const first = await ensure(dir, port);
      expect(first.status).toBe(0);
      expect(contextOf(first.stdout)).toContain(
        "reins: the reins daemon was not running, so tool calls since it stopped were not guarded; it has been restarted.",
      );
      expect(first.stderr).toContain("was not running");
      const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { root: string };
      expect(health.root).toBe(dir);
      // Running now: the next prompt carries the status only.
      const second = await ensure(dir, port);
      expect(second.status).toBe(0);
      expect(contextOf(second.stdout)).not.toContain("daemon");
      expect(second.stderr).toBe("");
    } finally {
      // Only when the server started: a failure above stays the one reported.
      const pidFile = join(dir, ".reins", "serve.pid");
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, "utf8")), "SIGTERM");
    }
  }, 60_000);

  it("starts one server when many sessions find it down at once, and the others wait for it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-ensure-"));
    writeFileSync(join(dir, "reins.config.json"), "{}");
    const port = await freePort();
    let most = 0;
    const census = setInterval(() => (most = Math.max(most, servePids(dir).length)), 20);
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => ensure(dir, port)));
      expect(results.map((r) => r.status)).toEqual([0, 0, 0, 0, 0, 0]);
      expect(await serverAt("127.0.0.1", port, dir)).toBe("ours");
      // Before the start lock, each of the six spawned a `reins serve`, five of them only to lose the port.
      expect(most).toBe(1);
      expect(existsSync(serveStartLock(dir)), "the start lock is released once the server listens").toBe(
        false,
      );
    } finally {
      clearInterval(census);
      await killPids(servePids(dir));
    }
  }, 60_000);

  it("says tool calls are not guarded when another program holds the server's port", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-ensure-"));
    writeFileSync(join(dir, "reins.config.json"), "{}");
    const other = createHttpServer((_req, res) => res.end("not reins"));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      const result = await ensure(dir, (other.address() as AddressInfo).port);
      expect(result.status).toBe(0);
      expect(contextOf(result.stdout)).toMatch(
        /could not start: port \d+ is taken .*tool calls are NOT guarded/,
      );
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      other.close();
    }
  });
});

describe("telling this project's server from an impostor", () => {
  it("trusts a server only when it proves it holds the project's hook secret", async () => {
    const port = Number(new URL(url).port);
    expect(await serverAt("127.0.0.1", port, project)).toBe("ours");
    // Something else on a port, claiming to be this project's server.
    const impostor = createHttpServer((_req, res) =>
      res.end(JSON.stringify({ ok: true, store: "sqlite", root: project })),
    );
    await new Promise<void>((resolve) => impostor.listen(0, "127.0.0.1", resolve));
    try {
      expect(await serverAt("127.0.0.1", (impostor.address() as AddressInfo).port, project)).toBe("other");
    } finally {
      impostor.close();
    }
  });

  it("tells a port nobody holds from a server too busy to answer, so no second server is started beside it", async () => {
    expect(await serverAt("127.0.0.1", await freePort(), project)).toBe("none");
    const slow = createHttpServer(() => undefined); // holds the connection, never answers
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    try {
      expect(await serverAt("127.0.0.1", (slow.address() as AddressInfo).port, project, 200)).toBe("busy");
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });

  it("proves who it is without reading the store, so a store that is slow or down does not hide the server", async () => {
    // A store whose reads never end, as Redis under load or half gone: only the challenge may be answered.
    const stuck: Store = Object.create(services.store) as Store;
    stuck.scopes = () => new Promise<never>(() => undefined);
    const other = await createServer({
      services: { ...services, store: stuck },
      secret,
      token: apiToken(project).value,
      host: "127.0.0.1",
    });
    const at = new URL(await other.listen({ host: "127.0.0.1", port: 0 }));
    try {
      expect(await serverAt("127.0.0.1", Number(at.port), project)).toBe("ours");
      const health = await fetch(`${at.origin}/healthz`, { signal: AbortSignal.timeout(300) }).catch(
        (error: Error) => error.name,
      );
      expect(health).toBe("TimeoutError"); // health without a challenge does read the store
    } finally {
      await other.close();
    }
  });
});
