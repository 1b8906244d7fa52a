import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replayRun } from "../src/guard/evaluate/replay.js";
import { logFiles, readLog } from "../src/guard/logs/load.js";
import { loadPolicy } from "../src/base/config/load-policy.js";
import { codexUnavailableReason, runCodex, type CodexRun } from "#test/codex-cli.js";
import { e2eProject, failJs, initReins, recorded, removeE2eProject } from "#test/e2e-project.js";
import { cleanEnv, runReins } from "#test/processes.js";
import {
  developerTexts,
  execCommand,
  lastFunctionCallOutputs,
  startFakeOpenAi,
  type FakeOpenAi,
  type Script,
} from "#test/fake-openai.js";

/**
 * The real Codex CLI (`codex exec`), offline against a scripted Responses API, with reins' hooks
 * installed by `reins init codex`. Assertions are on what the client did: the requests the fake model
 * received and the `--json` events, then on what reins recorded.
 */

let root: string;
let project: string;
let home: string;
let fake: FakeOpenAi | undefined;

beforeEach(async () => {
  ({ root, project, home } = e2eProject("codex", { "fail.js": failJs }));
  // The defaults: the client to the user's hook daemon, whose socket is in this test's own HOME.
  await initReins({ project, home }, ["codex"]);
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await removeE2eProject(root);
});

async function drive(script: Script, options: { hooks?: boolean } = {}): Promise<CodexRun> {
  fake = await startFakeOpenAi(script);
  const result = await runCodex({
    cwd: project,
    home,
    prompt: "Do the task.",
    baseUrl: fake.url,
    timeoutMs: 90_000,
    ...options,
  });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(result.code, result.stderr).toBe(0);
  expect(fake.errors).toEqual([]);
  return result;
}

describe.skipIf(codexUnavailableReason() !== null)("reins guarding the real Codex CLI", () => {
  it("denies the 5th identical failing shell call, and the model reads why", async () => {
    // Seven shell calls, then a final answer: one `codex exec` turn of eight model requests.
    const script: Script = (_request, turn) =>
      turn < 7 ? execCommand("node fail.js") : { text: "I am stuck." };
    const result = await drive(script);

    const main = fake!.mainRequests();
    expect(main).toHaveLength(8);
    const outputs = main.map((r) => lastFunctionCallOutputs(r)[0]?.text);
    // Calls 1-4 ran and failed for real; the 5th was denied by reins before it ran.
    for (let i = 1; i <= 4; i++) {
      expect(outputs[i]).toContain("Process exited with code 1");
      expect(outputs[i]).toContain("ECONNREFUSED");
    }
    expect(outputs[5]).toMatch(
      /^Command blocked by PreToolUse hook: reins: The same Bash call `node fail\.js` was made 5 times in a row/,
    );
    expect(outputs[6]).toMatch(/^Command blocked by PreToolUse hook: reins: The circuit breaker is open/);
    expect(outputs[7]).toMatch(/^Command blocked by PreToolUse hook: reins: The circuit breaker is open/);
    // Before the breaker, reins' PostToolUse notes reached the model as developer messages.
    expect(developerTexts(main[4]!).join("\n")).toContain("gave the same result 3 times");

    // What the client reports: only the four calls that ran are command executions.
    const commands = result.events.filter(
      (e) => e.type === "item.completed" && e.item?.type === "command_execution",
    );
    expect(commands).toHaveLength(4);
    expect(commands.every((e) => e.item?.exit_code === 1)).toBe(true);
    expect(result.events.at(-1)?.type).toBe("turn.completed");

    // The thread id is the hooks' session_id.
    expect(result.threadId).toBeDefined();
    const { log, state } = await recorded(project, result.threadId!);
    expect(state?.breaker).toMatchObject({ status: "open", reason: "duplicate_calls" });
    expect(log.filter((r) => r.event.kind === "tool.requested")).toHaveLength(7);

    // The rollout Codex wrote, read back by `reins replay`'s importer, gives the events the hooks recorded.
    const rollouts = logFiles(join(home, ".codex", "sessions"));
    expect(rollouts).toHaveLength(1);
    const replayed = replayRun(readLog(rollouts[0]!), loadPolicy({ cwd: project }).policy);
    const gist = (e: { kind: string; tool?: string; outcome?: string }) =>
      `${e.kind} ${e.tool ?? ""} ${e.outcome ?? ""}`;
    const tools = (e: { kind: string }) => e.kind === "tool.requested" || e.kind === "tool.completed";
    expect(
      replayed.calls
        .flatMap((c) => c.records.map((r) => r.event))
        .filter(tools)
        .map(gist),
    ).toEqual(
      log
        .map((r) => r.event)
        .filter(tools)
        .map(gist),
    );
    expect(replayed.stop).toMatchObject({ step: 5, guard: "circuit-breaker:duplicate_calls" });
  }, 120_000);

  it("runs reins' hooks after only `reins init codex`: no bypass flag, no trust but what init wrote", async () => {
    // The only trust there is: what `reins init codex` (beforeEach) wrote into the user's Codex config.
    const configPath = join(home, ".codex", "config.toml");
    const config = existsSync(configPath) ? readFileSync(configPath, "utf8") : null;
    const script: Script = (_request, turn) =>
      turn === 0 ? execCommand("node -e \"console.log('hi')\"") : { text: "Done." };
    // `hooks: false`: the harness passes no --dangerously-bypass-hook-trust and no project trust of its own.
    const result = await drive(script, { hooks: false });

    // Every hook ran: the session opened, the call was guarded, Stop was seen, and SessionEnd closed it.
    expect(result.threadId).toBeDefined();
    const kinds = (await recorded(project, result.threadId!)).log.map((r) => r.event.kind);
    expect(kinds[0]).toBe("session.started");
    expect(kinds).toContain("tool.requested");
    expect(kinds).toContain("tool.completed");
    expect(kinds).toContain("completion.claimed");
    expect(kinds.at(-1)).toBe("session.ended");
    // And the trust is reins' own doing, not the harness's: the config is what init wrote, unchanged.
    expect(config).toContain(`[projects.${JSON.stringify(project)}]`);
    expect(readFileSync(configPath, "utf8")).toBe(config);
    // Codex CLI is not contained (its sandbox cannot hide reins' files): said at the session's start and by
    // `reins doctor`.
    expect(JSON.stringify(fake!.requests)).toContain(
      "reins: not contained: reins cannot keep this agent from switching it off",
    );
    const doctor = runReins(["doctor", "--json"], { cwd: project, env: cleanEnv(home) });
    const checks = (
      JSON.parse(doctor.stdout) as { checks: { subject: string; check: string; status: string }[] }
    ).checks;
    expect(checks.find((c) => c.subject === "codex" && c.check === "contained")?.status).toBe("warn");
  }, 120_000);
});
