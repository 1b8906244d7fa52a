/**
 * Every project guarded on one machine: ten projects set up with the defaults (`reins init <agent>` for each of
 * the seven agent CLIs, no port), a mix of the real CLIs running in several of them at once
 * against scripted model APIs, all under one user's HOME. In every project a loop of one failing command is
 * denied by its 6th call and every token lands in that project's store and no other; the same after the
 * daemon is SIGKILLed, and after another program takes its socket and the port reins used to default to.
 * Once the sessions end, the daemon exits after its idle time and the next session is guarded again.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DoctorReport } from "../src/cli/doctor.js";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { REINS_BIN } from "../src/base/config/package-info.js";
import { listDaemons } from "../src/guard/daemon/list.js";
import { daemonName, socketPath } from "../src/guard/daemon/paths.js";
import { probeDaemon } from "../src/guard/daemon/probe.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { AGENT_LOOPS, type LoopAgent, type LoopResult } from "#test/agent-loops.js";
import { e2eProject, failJs } from "#test/e2e-project.js";
import { waitFor } from "#test/fault-redis.js";
import { alive, exits, stopHookDaemons } from "#test/processes.js";

const AGENTS = Object.keys(AGENT_LOOPS) as LoopAgent[];
type Agent = LoopAgent;
const unavailable = AGENTS.map((agent) => AGENT_LOOPS[agent].unavailable()).filter(
  (reason) => reason !== null,
);

/** The machine: one HOME, ten projects in it. */
let base: string;
let home: string;
const projects: string[] = [];
/** How long the daemon lives without hook calls here, so the test sees it go. */
const IDLE = "4s";
const env = () => ({ REINS_DAEMON_IDLE: IDLE });
const name = daemonName(REINS_BIN);
const socket = () => socketPath({ HOME: home }, name);

/** What one session did: which tool call was first denied (1-based), and the tokens the model reported. */
interface Session extends LoopResult {
  project: string;
  agent: Agent;
}

/** Seven identical failing calls, then a final answer; each reply reports this project's own token usage. */
async function failingLoop(project: string, agent: Agent, index: number): Promise<Session> {
  const result = await AGENT_LOOPS[agent].run({
    project,
    home,
    input: 1000 * (index + 1),
    output: index + 1,
    env: env(),
  });
  return { project, agent, ...result };
}

/** The sessions a project's store holds, and the tokens each used. */
async function storeOf(project: string): Promise<Map<string, number>> {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    const sessions = new Map<string, number>();
    for (const scope of await store.scopes()) {
      if (!scope.startsWith("session:")) continue;
      const state = await store.state(scope);
      sessions.set(scope.slice("session:".length), state?.budget.session.spent.tokens ?? 0);
    }
    return sessions;
  } finally {
    await store.close();
  }
}

/** Runs sessions at once and checks each: denied by the 6th call, its tokens in its project's store only. */
async function guardedAtOnce(which: [number, Agent][]): Promise<Session[]> {
  const sessions = await Promise.all(which.map(([i, agent]) => failingLoop(projects[i]!, agent, i)));
  const stores = new Map<string, Map<string, number>>();
  for (const project of projects) stores.set(project, await storeOf(project));
  for (const session of sessions) {
    const where = `${session.agent} in ${session.project}`;
    expect(session.sessionId, where).not.toBe("");
    expect(session.firstDenied, where).not.toBeNull();
    expect(session.firstDenied!, where).toBeLessThanOrEqual(6);
    const stored = stores.get(session.project)?.get(session.sessionId) ?? 0;
    expect(stored, where).toBe(session.tokens);
    for (const [project, store] of stores)
      if (project !== session.project)
        expect(store.has(session.sessionId), `${where}, seen in ${project}`).toBe(false);
  }
  // One line per wave, for the record: which call of each loop was denied.
  console.info(
    sessions
      .map(
        (s) =>
          `${s.agent} ${s.project.split("-").pop()}: denied at call ${s.firstDenied}, ${s.tokens} tokens`,
      )
      .join("; "),
  );
  return sessions;
}

async function reinsIn(project: string, ...argv: string[]) {
  // The PATH the agents run with: Claude Code's sandbox needs bubblewrap and socat on it.
  const io = memoryIo({ cwd: project, env: { HOME: home, PATH: process.env.PATH ?? "" } });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

/** The reins processes (hooks, daemons) running with this test's HOME. */
function reinsProcesses(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (cmdline.includes("reins") && environ.includes(`HOME=${home}`) && alive(Number(entry)))
        found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

const servers: (Server | NetServer)[] = [];

beforeAll(async () => {
  const made = e2eProject("many");
  base = made.root;
  home = made.home;
  rmSync(made.project, { recursive: true, force: true });
  for (let i = 0; i < 10; i++) {
    const project = join(base, `project-${i}`);
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "fail.js"), failJs);
    const git = (...args: string[]) => execFileSync("git", ["-C", project, ...args], { stdio: "ignore" });
    git("init", "-q");
    git("add", "fail.js");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start");
    projects.push(project);
    for (const agent of AGENTS) {
      const result = await reinsIn(project, "init", agent);
      expect(result.code, `reins init ${agent} in ${project}: ${result.err}`).toBe(0);
    }
  }
}, 120_000);

afterAll(async () => {
  for (const server of servers) server.close();
  await stopHookDaemons({ HOME: home });
  rmSync(base, { recursive: true, force: true });
}, 60_000);

describe.skipIf(unavailable.length > 0)("ten projects guarded at once on one machine", () => {
  it("runs every agent in the ten projects, several at once: each loop denied by its 6th call, each token in its own project's store", async () => {
    const plan: [number, Agent][] = projects.map((_p, i) => [i, AGENTS[i % AGENTS.length]!]);
    // Two waves of five sessions at once: the machine has two cores.
    await guardedAtOnce(plan.slice(0, 5));
    await guardedAtOnce(plan.slice(5));
    // One daemon answered them all.
    const daemons = (await listDaemons({ HOME: home })).filter((d) => d.running);
    expect(daemons.length).toBeLessThanOrEqual(1);
    for (const project of projects) {
      const result = await reinsIn(project, "doctor", "--json");
      const report = JSON.parse(result.out) as DoctorReport;
      // Claude Code is contained by its own sandbox; Codex and Gemini CLI are said not to be, a warning.
      const uncontained = (c: { subject: string; check: string }) =>
        c.check === "contained" && c.subject !== "claude";
      expect(
        report.checks.filter((c) => (c.status === "fail" || c.status === "warn") && !uncontained(c)),
        project,
      ).toEqual([]);
      expect(result.code).toBe(0);
      // Nothing reins wrote shows in git.
      expect(execFileSync("git", ["-C", project, "status", "--porcelain"], { encoding: "utf8" })).toBe("");
    }
  }, 900_000);

  it("after the daemon is SIGKILLed: the next sessions are guarded, and a daemon serves them again", async () => {
    const before = await probeDaemon(socket());
    if (before !== null) {
      process.kill(before.pid, "SIGKILL");
      expect(await exits(before.pid, 15_000)).toBe(true);
    }
    await guardedAtOnce([
      [0, "claude"],
      [4, "codex"],
      [8, "gemini"],
    ]);
    // The first hook call after the kill starts a daemon for the next ones, which comes up on its own time.
    let after: Awaited<ReturnType<typeof probeDaemon>> = null;
    await waitFor("a daemon to serve again", async () => (after = await probeDaemon(socket())) !== null);
    expect(after!.pid).not.toBe(before?.pid);
  }, 600_000);

  it("after another program takes the daemon's socket and port 7878: the next sessions are guarded, the socket taken back", async () => {
    await stopHookDaemons({ HOME: home });
    const squatter = createNetServer((c) => c.end("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"));
    await new Promise<void>((resolve) => squatter.listen(socket(), resolve));
    servers.push(squatter);
    const web = createHttpServer((_req, res) => res.end("not reins"));
    await new Promise<void>((resolve) => {
      web.once("error", () => resolve()); // 7878 already taken by something else: it is not reins' either way
      web.listen(7878, "127.0.0.1", resolve);
    });
    servers.push(web);
    await guardedAtOnce([
      [1, "codex"],
      [5, "gemini"],
      [9, "claude"],
    ]);
    expect(await probeDaemon(socket())).not.toBeNull();
  }, 600_000);

  it("leaves no reins process once the sessions end and the idle time passes; the next session is guarded again", async () => {
    // The daemon lives REINS_DAEMON_IDLE (4 s here) after the last hook call, then nothing of reins is left.
    const daemon = await probeDaemon(socket());
    if (daemon !== null) expect(daemon.idleMs).toBe(4_000);
    for (let i = 0; i < 200 && reinsProcesses().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(reinsProcesses()).toEqual([]);
    expect(await probeDaemon(socket())).toBeNull();
    await guardedAtOnce([[2, "claude"]]);
    expect(await probeDaemon(socket())).not.toBeNull();
  }, 300_000);
});
