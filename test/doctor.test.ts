/** `reins doctor` on projects whose hooks, trust, daemon and store are each in place or not. */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { DoctorReport } from "../src/cli/doctor.js";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { openServices, type HookServices } from "../src/guard/hooks/hook-call.js";
import { apiToken, hookSecret } from "../src/base/config/hook-secret.js";
import { createServer } from "../src/server/server.js";
import { REINS_BIN } from "../src/base/config/package-info.js";
import { startHookDaemon, type HookDaemon } from "../src/guard/daemon/hook-daemon.js";
import { daemonName, socketPath } from "../src/guard/daemon/paths.js";
import { freePort } from "#test/free-port.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project folder with an empty config, removed after the tests. */
function project(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-doctor-")));
  dirs.push(dir);
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

async function reins(dir: string, env: Record<string, string>, ...argv: string[]) {
  const io = memoryIo({ cwd: dir, env: { HOME: join(dir, "home"), ...env } });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

async function doctor(dir: string, env: Record<string, string> = {}, ...argv: string[]) {
  const { code, out, err } = await reins(dir, env, "doctor", "--json", ...argv);
  expect(err).toBe("");
  const report = JSON.parse(out) as DoctorReport;
  const line = (subject: string, check: string) =>
    report.checks.find((c) => c.subject === subject && c.check === check);
  return { code, report, line };
}

/** `reins init <args>` in `dir`, which must succeed. */
async function init(dir: string, ...args: string[]) {
  const { code, err } = await reins(dir, {}, "init", ...args);
  expect(code, `reins init ${args.join(" ")}: ${err}`).toBe(0);
}

/** Every agent set up in `dir`, with the defaults. */
async function setUp(dir: string, ...flags: string[]) {
  for (const agent of ["claude", "codex", "gemini", "qwen", "copilot"]) await init(dir, agent, ...flags);
}

const started: { app?: FastifyInstance; services?: HookServices; plain?: Server; hooks?: HookDaemon }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) {
    await s.hooks?.close("test over");
    await s.app?.close();
    await s.services?.store.close();
    await new Promise((resolve) => (s.plain ? s.plain.close(resolve) : resolve(null)));
  }
});

/** This project's server, in this process, on a free port. */
async function projectServer(dir: string): Promise<number> {
  const services = await openServices(dir, {});
  const app = await createServer({
    services,
    secret: hookSecret(dir),
    token: apiToken(dir).value,
    host: "127.0.0.1",
    log: () => {},
  });
  started.push({ app, services });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return Number(new URL(url).port);
}

describe("reins doctor", () => {
  it("says all is well when every agent's hooks are installed and trusted, the daemon answers and the store opens", async () => {
    const dir = project();
    // The PATH the agents would run with: Claude Code's sandbox needs bubblewrap and socat on it.
    const env = {
      REINS_RUNTIME_DIR: realpathSync(mkdtempSync(join(tmpdir(), "reins-doctor-rt-"))),
      PATH: process.env.PATH ?? "",
    };
    dirs.push(env.REINS_RUNTIME_DIR);
    await setUp(dir);
    // Claude Code's sandbox hides the runtime folder in use: the one of this test's own.
    expect((await reins(dir, env, "init", "claude")).code).toBe(0);
    const idle = await doctor(dir, env);
    // Not running is not a fault, and not "ok" either: "off", with the command that starts it.
    expect(idle.line("daemon", "running")).toMatchObject({
      status: "off",
      fix: "reins daemon start",
      message:
        "the user's hook daemon is not running; the first hook call starts it (and is answered in-process meanwhile)",
    });
    const hooks = await startHookDaemon({
      socket: socketPath(env, daemonName(REINS_BIN)),
      bin: REINS_BIN,
      version: "test",
    });
    if (hooks.kind === "listening") started.push({ hooks: hooks.daemon });
    const { code, report, line } = await doctor(dir, env);
    // Codex and Gemini CLI are not contained (reins sets no sandbox for them): a warning, not a failure.
    expect(
      report.checks
        .filter((c) => c.status !== "ok")
        .map(({ subject, check, status }) => [subject, check, status]),
    ).toEqual([
      ["codex", "contained", "warn"],
      ["gemini", "contained", "warn"],
      ["qwen", "contained", "warn"],
      ["copilot", "contained", "warn"],
    ]);
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
    expect(line("copilot", "hooks")?.message).toBe(
      "7 hooks (the client to the user's hook daemon) in .github/hooks/reins.json",
    );
    expect(line("copilot", "contained")?.message).toMatch(/^not contained: .*Copilot CLI's sandbox/);
    expect(line("claude", "hooks")?.message).toBe(
      "8 hooks (the client to the user's hook daemon) in .claude/settings.local.json",
    );
    expect(line("codex", "hooks")?.message).toBe(
      "6 hooks (the client to the user's hook daemon) in .codex/hooks.json",
    );
    expect(line("qwen", "hooks")?.message).toBe(
      "7 hooks (the client to the user's hook daemon) in .qwen/settings.json",
    );
    expect(line("codex", "project trust")?.status).toBe("ok");
    expect(line("codex", "hook trust")?.message).toBe("Codex trusts reins' 6 hooks");
    expect(line("gemini", "folder trust")?.status).toBe("ok");
    expect(line("daemon", "running")?.message).toMatch(
      /^the user's hook daemon answers \(pid \d+, reins test, 0 project\(s\) open\)$/,
    );
    expect(line("store", "opens")?.message).toMatch(
      /^(sqlite \.reins\/reins\.db \(\d+ scopes\)|no database yet)/,
    );

    const text = await reins(dir, env, "doctor");
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^reins doctor: .*\nok {4}claude {2}hooks {10}8 hooks/);
    expect(text.out).toMatch(/\nnothing an installed agent needs is wrong\n$/);
  });

  it("reports an agent with nothing installed as not set up, not as a problem; missing hooks are one", async () => {
    const dir = project();
    const bare = await doctor(dir);
    expect(bare.code).toBe(0);
    for (const agent of ["claude", "codex", "gemini"])
      expect(bare.line(agent, "hooks")).toMatchObject({
        status: "off",
        message: "not set up",
        fix: `reins init ${agent}`,
      });
    expect(bare.line("daemon", "running")?.status).toBe("off");
    expect(bare.line("store", "opens")?.message).toBe(
      "no database yet; the first hook creates .reins/reins.db",
    );

    await init(dir, "codex");
    const hooksFile = join(dir, ".codex", "hooks.json");
    const hooks = JSON.parse(readFileSync(hooksFile, "utf8")) as { hooks: Record<string, unknown> };
    delete hooks.hooks.PreToolUse;
    writeFileSync(hooksFile, JSON.stringify(hooks));
    const partial = await doctor(dir);
    expect(partial.code).toBe(1);
    expect(partial.line("codex", "hooks")).toMatchObject({
      status: "fail",
      message: ".codex/hooks.json lacks reins' PreToolUse hook(s)",
      fix: "reins init codex",
    });
    const text = await reins(dir, {}, "doctor");
    expect(text.out).toMatch(
      /\nFAIL {2}codex {3}hooks {10}\.codex\/hooks\.json lacks reins' PreToolUse hook\(s\) {2}→ reins init codex\n/,
    );
    expect(text.out).toMatch(/\n1 problem: an installed agent is not guarded as it should be\n$/);
  });

  it("fails when Codex does not trust the project or reins' hooks, and when Gemini CLI does not trust the folder", async () => {
    const dir = project();
    await init(dir, "codex", "--no-trust");
    await init(dir, "gemini", "--no-trust");
    const { code, line } = await doctor(dir);
    expect(code).toBe(1);
    expect(line("codex", "project trust")).toMatchObject({
      status: "fail",
      message: expect.stringContaining(
        "does not trust this project: Codex loads none of its .codex/ and runs none of reins' hooks",
      ) as string,
      fix: "reins init codex",
    });
    expect(line("codex", "hook trust")).toMatchObject({
      status: "fail",
      message: expect.stringMatching(
        /^Codex has not trusted 6 of reins' 6 hooks \(session_start:0:0, /,
      ) as string,
    });
    expect(line("gemini", "folder trust")).toMatchObject({
      status: "fail",
      message: expect.stringContaining(
        "Gemini CLI (even with --skip-trust) loads none of its settings",
      ) as string,
      fix: "reins init gemini",
    });
    // Gemini's environment override trusts every folder.
    expect(
      (await doctor(dir, { GEMINI_CLI_TRUST_WORKSPACE: "true" })).line("gemini", "folder trust")?.status,
    ).toBe("ok");

    await init(dir, "codex");
    await init(dir, "gemini");
    const fixed = await doctor(dir);
    expect(fixed.code).toBe(0);
    expect(fixed.report.checks.filter((c) => c.status === "fail")).toEqual([]);
  });

  it("with --http: warns when the project's server is down, fails when another program holds its port", async () => {
    const dir = project();
    const port = await freePort();
    await init(dir, "claude", "--http", "--port", String(port));
    const down = await doctor(dir);
    expect(down.code).toBe(0);
    expect(down.line("server", "running")).toMatchObject({
      status: "warn",
      message: `nothing answers on 127.0.0.1:${port}; the agents' session-start hook starts it, until then tool calls are not guarded`,
      fix: `reins serve --ensure --port ${port}`,
    });
    const ours = await projectServer(dir);
    expect((await doctor(dir, {}, "--port", String(ours))).line("server", "running")).toMatchObject({
      status: "ok",
      message: `this project's server answers on 127.0.0.1:${ours}`,
    });

    const plain = createHttpServer((_req, res) => res.end("hello"));
    started.push({ plain });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    const taken = (plain.address() as AddressInfo).port;
    const other = await doctor(dir, {}, "--port", String(taken));
    expect(other.code).toBe(1);
    expect(other.line("server", "running")).toMatchObject({
      status: "fail",
      message: `127.0.0.1:${taken} answers for another project or program: this project's http hooks cannot reach their server`,
    });
  });

  it("warns about hooks an older reins installed, which answer every call in-process", async () => {
    const dir = project();
    await init(dir, "codex");
    const file = join(dir, ".codex", "hooks.json");
    // What an older reins wrote: the client with a port, and no daemon name.
    writeFileSync(file, readFileSync(file, "utf8").replace(/ d-[0-9a-f]{8}"/g, '"'));
    const old = await doctor(dir);
    expect(old.line("codex", "hooks")).toMatchObject({
      status: "warn",
      message:
        ".codex/hooks.json has the client of an older reins, which answers every call in-process (slowly)",
      fix: "reins init codex",
    });
  });

  it("fails when the store does not open", async () => {
    const dir = project();
    await init(dir, "claude", "--in-process");
    mkdirSync(join(dir, ".reins"), { recursive: true });
    writeFileSync(join(dir, ".reins", "reins.db"), "this is not a database, it is garbage ".repeat(200));
    const { code, line } = await doctor(dir);
    expect(code).toBe(1);
    expect(line("store", "opens")).toMatchObject({
      status: "fail",
      message: expect.stringContaining("reins.db") as string,
      fix: "move the file aside (mv .reins/reins.db .reins/reins.db.broken); reins starts a new one",
    });
    // An in-process install needs no daemon.
    expect(line("daemon", "running")?.status).toBe("off");
  });

  it("fails for each problem of the config, and still checks the store it names", async () => {
    const dir = project();
    await init(dir, "claude", "--in-process");
    writeFileSync(join(dir, "reins.config.json"), '{\n  "budget": { "sesion": { "tokens": 1000 } }\n}');
    const typo = await doctor(dir);
    expect(typo.code).toBe(1);
    expect(typo.report.checks.filter((c) => c.subject === "config")).toEqual([
      {
        subject: "config",
        check: "valid",
        status: "fail",
        message:
          'reins.config.json:2:15: unknown key "sesion" in budget (did you mean "session"?); reins is guarding with the defaults for it',
        fix: "edit reins.config.json; `reins config` shows what reins guards with",
      },
    ]);
    expect(typo.line("store", "opens")?.status).toBe("ok");
    expect(typo.line("claude", "hooks")?.status).toBe("ok");

    writeFileSync(join(dir, "reins.config.json"), '{ "budget": ');
    expect((await doctor(dir)).line("config", "valid")).toMatchObject({
      status: "fail",
      message:
        "reins.config.json:1:13: not valid JSON: a value expected; reins is guarding with the defaults for all of it",
    });
    writeFileSync(join(dir, "reins.config.json"), '{ "budget": { "session": { "tokens": 1000 } } }');
    const fixed = await doctor(dir);
    expect(fixed.line("config", "valid")).toBeUndefined();
    expect(fixed.code).toBe(0);
  });
});
