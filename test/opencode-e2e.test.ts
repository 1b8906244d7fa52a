import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { e2eProject, npmTestPackage, recorded, removeE2eProject } from "#test/e2e-project.js";
import { startFakeChat, toolResults, userTexts, type ChatReply, type FakeChat } from "#test/fake-chat.js";
import { opencodeUnavailableReason, runOpencode } from "#test/opencode-cli.js";
import { cleanEnv, runReins } from "#test/processes.js";
import type { ModelScript } from "#test/fake-model.js";
import type { ChatRequest } from "#test/fake-chat.js";
import { SqliteStore } from "../src/base/store/sqlite.js";

/**
 * The real opencode and Kilo Code CLIs (`<cli> run`), offline against a scripted Chat Completions API, with
 * reins' plugin installed by `reins init <agent>` and nothing else. Assertions are on what the CLI sent the
 * model (the recorded requests), then on what reins recorded in the project's store.
 */

const AGENTS = ["opencode", "kilo"] as const;

describe.each(AGENTS)("reins guarding the real %s", (agent) => {
  // Skipped where the pinned CLI cannot start (on CI that throws instead: there the tests must run).
  const missing = opencodeUnavailableReason(agent)() !== null;
  let root: string;
  let project: string;
  let home: string;
  let fake: FakeChat | undefined;

  beforeEach(() => {
    ({ root, project, home } = e2eProject(agent, {
      "package.json": npmTestPackage(),
      "test.js": "console.log('Tests: 1 passed, 1 total');\n",
    }));
    const init = runReins(["init", agent], { cwd: project, env: cleanEnv(home) });
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toContain("not contained");
  });

  afterEach(async () => {
    await fake?.close();
    fake = undefined;
    await removeE2eProject(root);
  }, 30_000);

  async function drive(script: ModelScript<ChatRequest, ChatReply>) {
    fake = await startFakeChat(script);
    const result = await runOpencode({
      agent,
      cwd: project,
      home,
      prompt: "Do the task.",
      baseUrl: fake.url,
      timeoutMs: 150_000,
    });
    expect(result.timedOut, result.stderr).toBe(false);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.errors).toEqual([]);
    return result;
  }

  /** The one session reins recorded for the project, with its log and state. */
  async function theSession() {
    const store = new SqliteStore(join(project, ".reins", "reins.db"));
    const scopes = await store.scopes().finally(() => store.close());
    const sessions = scopes.filter((s) => s.startsWith("session:"));
    expect(sessions).toHaveLength(1);
    const id = sessions[0]!.slice("session:".length);
    return { id, ...(await recorded(project, id)) };
  }

  it.skipIf(missing)(
    "denies a loop of one failing command by its 6th call, and the model reads why",
    async () => {
      const plugin = join(project, agent === "kilo" ? ".kilo" : ".opencode", "plugins", "reins.js");
      expect(existsSync(plugin)).toBe(true);
      const failing = { name: "bash", arguments: { command: "ls /nonexistent-dir", description: "list" } };
      await drive((_request, turn) => (turn < 6 ? { toolCalls: [failing] } : { text: "I am stuck." }));

      const main = fake!.mainRequests();
      // The tool results the model was sent, one per call: the first that carries reins' reason is the deny.
      const results = main.map((r) => toolResults(r).at(-1) ?? "");
      const denied = results.findIndex((t) => t.startsWith("reins: "));
      expect(denied).toBeGreaterThan(0);
      expect(denied).toBeLessThanOrEqual(6);
      expect(results[denied]).toMatch(/ls \/nonexistent-dir/);
      for (let i = 1; i < denied; i++) expect(results[i]).toMatch(/No such file or directory/);

      const { log } = await theSession();
      const kinds = log.map((r) => r.event.kind);
      expect(kinds[0]).toBe("session.started");
      expect(log.some((r) => r.event.kind === "tool.requested" && r.decision.verdict === "block")).toBe(true);
      expect(kinds.filter((k) => k === "tool.completed")).toHaveLength(denied - 1);
      // The calls went to the user's hook daemon, signed with the project's secret (a refused signature would
      // have sent each call in-process): the daemon counts them for this project and agent.
      const daemons = runReins(["daemon", "status", "--json"], { cwd: project, env: cleanEnv(home) });
      const entries = JSON.parse(daemons.stdout) as {
        status?: { projects: { root: string; calls: Record<string, number> }[] };
      }[];
      const served = entries.flatMap((e) => e.status?.projects ?? []).find((p) => p.root === project);
      expect(served?.calls[agent] ?? 0).toBeGreaterThan(denied);
    },
    240_000,
  );

  it.skipIf(missing)(
    "lets a healthy session run, refuses 'done' once before the checks ran, and counts every token",
    async () => {
      const script: ChatReply[] = [
        {
          toolCalls: [
            {
              name: "write",
              arguments: { filePath: join(project, "app.js"), content: "module.exports = 1;\n" },
            },
          ],
          usage: { prompt: 1_000, completion: 40 },
        },
        { text: "Done.", usage: { prompt: 1_100, completion: 10 } },
        {
          toolCalls: [{ name: "bash", arguments: { command: "npm test", description: "tests" } }],
          usage: { prompt: 1_200, completion: 30 },
        },
        { text: "All tests pass.", usage: { prompt: 1_300, completion: 7 } },
      ];
      await drive(script);

      const main = fake!.mainRequests();
      expect(readFileSync(join(project, "app.js"), "utf8")).toBe("module.exports = 1;\n");
      const { log, state } = await theSession();
      expect(log.filter((r) => r.event.kind === "tool.requested" && r.decision.verdict === "block")).toEqual(
        [],
      );
      const claims = log.filter((r) => r.event.kind === "completion.claimed");
      const usage = log.flatMap((r) => (r.event.kind === "usage.recorded" ? [r.event] : []));
      if (agent === "opencode") {
        expect(main).toHaveLength(4);
        // The refusal reached the model as a user message before its third turn; it then ran the tests.
        expect(userTexts(main[2]!).find((t) => t.includes("reins: Not done yet"))).toBeDefined();
        expect(toolResults(main[3]!).at(-1)).toContain("Tests: 1 passed");
        expect(claims.map((c) => c.decision.verdict)).toEqual(["block", "allow"]);
        expect(usage).toHaveLength(4);
        expect(fake!.sent).toEqual({ input: 4_600, output: 87 });
      } else {
        // Kilo Code 7.7.9 records the refusal but does not take the turn the refusal's prompt asks for
        // (docs/agent-opencode.md, "Limits"): the session ends after "Done.".
        expect(main).toHaveLength(2);
        expect(claims.map((c) => c.decision.verdict)).toEqual(["block"]);
        expect(usage).toHaveLength(2);
        expect(fake!.sent).toEqual({ input: 2_100, output: 50 });
      }
      // Every token the API sent on the session's turns, counted once.
      expect(state?.budget.session.spent.tokens).toBe(fake!.sent.input + fake!.sent.output);

      const doctor = runReins(["doctor", "--json"], { cwd: project, env: cleanEnv(home) });
      const checks = (
        JSON.parse(doctor.stdout) as { checks: { subject: string; check: string; status: string }[] }
      ).checks;
      const statusOf = (check: string) =>
        checks.find((c) => c.subject === agent && c.check === check)?.status;
      expect(statusOf("plugin")).toBe("ok");
      expect(statusOf("contained")).toBe("warn");
    },
    240_000,
  );
});
