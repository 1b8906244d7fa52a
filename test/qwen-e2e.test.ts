import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { e2eProject, failJs, npmTestPackage, recorded, removeE2eProject } from "#test/e2e-project.js";
import {
  lastToolResults,
  startFakeChatTools,
  textOf,
  toolCall,
  type FakeChatTools,
} from "#test/fake-chat-tools.js";
import type { ScriptedReply, ScriptedUsage } from "#test/fake-openai.js";
import type { ModelScript } from "#test/fake-model.js";
import type { ChatToolsRequest } from "#test/fake-chat-tools.js";
import { qwenUnavailableReason, runQwen, type QwenRun } from "#test/qwen-cli.js";
import { cleanEnv, runReins } from "#test/processes.js";

/**
 * The real Qwen Code (0.15.10), headless and offline against a scripted OpenAI Chat Completions API, with
 * reins' hooks installed by `reins init qwen` and nothing else (the defaults: the C client to the user's hook
 * daemon, whose socket is in this test's own HOME). Assertions are on what the model was sent (the requests
 * the fake received), then on what reins recorded.
 */

let root: string;
let project: string;
let home: string;
let fake: FakeChatTools | undefined;

beforeEach(() => {
  ({ root, project, home } = e2eProject("qwen", {
    "package.json": npmTestPackage(),
    "test.js": "console.log('Tests: 1 passed, 1 total');\n",
    "db.js": failJs,
  }));
  const init = runReins(["init", "qwen"], { cwd: project, env: cleanEnv(home) });
  expect(init.status, init.stderr).toBe(0);
  expect(init.stdout).toContain("not contained");
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await removeE2eProject(root);
});

const shell = (command: string, usage?: ScriptedUsage) =>
  toolCall("run_shell_command", { command, description: "run it", is_background: false }, usage);

async function drive(script: ModelScript<ChatToolsRequest, ScriptedReply>): Promise<QwenRun> {
  fake = await startFakeChatTools(script);
  const result = await runQwen({ cwd: project, home, prompt: "Do the task.", baseUrl: fake.url });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(result.code, result.stderr).toBe(0);
  expect(fake.errors).toEqual([]);
  expect(fake.requests.filter((r) => r.kind === "other").map((r) => r.path)).toEqual([]);
  expect(result.sessionId).toBeDefined();
  return result;
}

/** Every text the model was sent in a request, as one string. */
const sentText = (request: ChatToolsRequest) =>
  (request.body?.messages ?? []).map((m) => textOf(m.content)).join("\n");

function reinsJson(args: readonly string[]): unknown {
  const out = runReins([...args, "--json"], { cwd: project, env: cleanEnv(home) });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as unknown;
}

describe.skipIf(qwenUnavailableReason() !== null)("reins guarding the real Qwen Code", () => {
  it("denies a failing command repeated in a loop by its 6th call; the model reads why", async () => {
    const script = (_r: ChatToolsRequest, turn: number) =>
      turn < 7 ? shell("node db.js") : { text: "I am stuck." };
    const result = await drive(script);

    const main = fake!.mainRequests();
    const answers = main.map((r) => lastToolResults(r)[0]?.text ?? "");
    // The calls before ran for real and failed (reins' note on the repeated error with them); the one denied
    // never ran: its result is reins' reason.
    const denied = answers.findIndex((a, i) => i > 0 && !a.includes("ECONNREFUSED"));
    // The 5th identical failing call (within the "by its 6th" asked of every agent).
    expect(denied).toBe(5);
    for (const answer of answers.slice(1, denied)) expect(answer).toContain("ECONNREFUSED");
    expect(answers[denied - 1]).toContain("reins: The same error came back");
    expect(answers[denied]).toMatch(
      /reins: The same \S+ call `node db\.js`|reins: The circuit breaker is open/,
    );
    // At the prompt, the status and "not contained" reached the model.
    expect(sentText(main[0]!)).toMatch(/reins: session budget/);
    expect(sentText(main[0]!)).toContain("reins: not contained");

    const { log, state } = await recorded(project, result.sessionId!);
    expect(log[0]?.event).toMatchObject({ kind: "session.started", agent: "qwen" });
    expect(log.some((r) => r.event.kind === "tool.requested" && r.decision.verdict === "block")).toBe(true);
    expect(state?.breaker.status).toBe("open");

    const doctor = reinsJson(["doctor"]) as { checks: { subject: string; check: string; status: string }[] };
    const statusOf = (check: string) =>
      doctor.checks.find((c) => c.subject === "qwen" && c.check === check)?.status;
    expect(statusOf("hooks")).toBe("ok");
    expect(statusOf("contained")).toBe("warn");
    // Qwen Code rewrote the settings file ("$version", a `.orig` beside it): reins still reads its hooks.
    expect(existsSync(join(project, ".qwen", "settings.json.orig"))).toBe(true);
    expect(readFileSync(join(project, ".qwen", "settings.json"), "utf8")).toContain('"$version"');
  }, 90_000);

  it('refuses "done" once while the tests have not run, then lets a healthy session stop; every token counted', async () => {
    const script: ScriptedReply[] = [
      {
        text: "Writing it.",
        ...toolCall(
          "write_file",
          { file_path: join(project, "slug.js"), content: "export const slug = (s) => s.toLowerCase();\n" },
          { input_tokens: 1_000, output_tokens: 40 },
        ),
      },
      { text: "Done.", usage: { input_tokens: 1_100, output_tokens: 12 } },
      shell("npm test", { input_tokens: 1_200, output_tokens: 30, cached_tokens: 300 }),
      { text: "The tests pass.", usage: { input_tokens: 1_300, output_tokens: 25 } },
    ];
    const result = await drive(script);

    const main = fake!.mainRequests();
    expect(main).toHaveLength(4);
    // The Stop after "Done." was refused: its reason came to the model as the next user message.
    const refusal = main[2]!.body!.messages.at(-1)!;
    expect(refusal.role).toBe("user");
    expect(textOf(refusal.content)).toMatch(/reins: .*npm test/);
    expect(lastToolResults(main[3]!)[0]?.text).toContain("Tests: 1 passed");

    const { log, state } = await recorded(project, result.sessionId!);
    const claims = log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict);
    expect(claims).toEqual(["block", "allow"]);
    // Nothing else denied.
    expect(log.filter((r) => r.decision.verdict === "block")).toHaveLength(1);
    expect(state?.breaker.status).toBe("closed");

    // Every token the API sent, once: input less the cached part, output; the cached ones beside.
    const sent = fake!.usageSent;
    expect(sent).toHaveLength(4);
    const usage = log.flatMap((r) => (r.event.kind === "usage.recorded" ? [r.event] : []));
    expect(usage.map((e) => [e.inputTokens, e.outputTokens, e.cacheReadTokens])).toEqual(
      sent.map((u) => [
        u.prompt_tokens - u.prompt_tokens_details.cached_tokens,
        u.completion_tokens,
        u.prompt_tokens_details.cached_tokens,
      ]),
    );
    const total = sent.reduce((n, u) => n + u.total_tokens - u.prompt_tokens_details.cached_tokens, 0);
    expect(state?.budget.session.spent.tokens).toBe(total);
  }, 90_000);

  it("`reins init qwen --uninstall` takes out what it added, also from the file Qwen Code rewrote", async () => {
    await drive([{ text: "Nothing to do." }]);
    expect(existsSync(join(project, ".qwen", "settings.json.orig"))).toBe(true);
    const out = runReins(["init", "qwen", "--uninstall"], { cwd: project, env: cleanEnv(home) });
    expect(out.status, out.stderr).toBe(0);
    expect(existsSync(join(project, ".qwen", "settings.json"))).toBe(false);
    expect(existsSync(join(project, ".qwen", "settings.json.orig"))).toBe(false);
  }, 90_000);
});
