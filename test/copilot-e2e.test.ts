import { describe, expect, it } from "vitest";
import { copilotSessions, copilotUnavailableReason, runCopilot, type CopilotRun } from "#test/copilot-cli.js";
import { e2eEach, failJs, initReins, npmTestPackage, recorded } from "#test/e2e-project.js";
import {
  bashCall,
  startFakeChatStream,
  textsOf,
  toolResults,
  type ChatReply,
  type ChatStreamRequest,
  type FakeChatStream,
} from "#test/fake-chat-stream.js";
import type { ModelScript } from "#test/fake-model.js";

/**
 * The real GitHub Copilot CLI (`copilot -p`), offline against a scripted streaming Chat Completions API, with
 * reins' hooks installed by the default `reins init copilot` (the C client to the user's hook daemon, whose
 * socket is in the test's own HOME). Assertions are on what the model was sent (the fake's requests) and
 * what reins recorded in the project's store.
 */

const each = e2eEach<FakeChatStream>("copilot", {
  "fail.js": failJs,
  "package.json": npmTestPackage(),
  "test.js": "console.log('1 passing');\n",
});

async function drive(script: ModelScript<ChatStreamRequest, ChatReply>): Promise<CopilotRun> {
  await initReins(each, ["copilot"]);
  const fake = await startFakeChatStream(script);
  each.fake = fake;
  const result = await runCopilot({
    cwd: each.project,
    home: each.home,
    prompt: "Do the task.",
    baseUrl: fake.url,
  });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  expect(fake.errors).toEqual([]);
  return result;
}

/** The session's record in the project's store; every token the fake sent is counted there, exactly. */
async function session() {
  const sessions = copilotSessions(each.home);
  expect(sessions).toHaveLength(1);
  const { log, state } = await recorded(each.project, sessions[0]!);
  const spent = state?.budget.session.spent.tokens;
  expect(spent).toBe(each.fake!.sent.tokens);
  return { log, state };
}

describe.skipIf(copilotUnavailableReason() !== null)("reins guarding the real Copilot CLI", () => {
  it("denies a loop of one failing command by its 6th call, and the model reads why", async () => {
    // Seven calls of one failing command, then a final answer: one prompt of eight model requests.
    await drive((_request, turn) => (turn < 7 ? bashCall("node fail.js") : { text: "I am stuck." }));
    const main = each.fake!.mainRequests();
    expect(main).toHaveLength(8);
    // Request i carries the result of call i.
    const results = main.map((r) => toolResults(r).at(-1) ?? "");
    for (let i = 1; i <= 4; i++) expect(results[i]).toMatch(/ECONNREFUSED[\s\S]*completed with exit code 1/);
    // reins' advice after the repeats reached the model as the hook's additional context.
    expect(textsOf(main[4]!).join("\n")).toContain("gave the same result 3 times with nothing changed");
    // The 5th call was denied before it ran, and the model read why; the 6th and 7th met the open breaker.
    expect(results[5]).toMatch(
      /^Denied by preToolUse hook: reins: The same bash call `node fail\.js` was made 5 times in a row/,
    );
    expect(results[6]).toMatch(/^Denied by preToolUse hook: reins: The circuit breaker is open/);
    const { log, state } = await session();
    expect(state?.breaker.status).toBe("open");
    const ran = log.filter((r) => r.event.kind === "tool.completed");
    expect(ran.map((r) => r.event.kind === "tool.completed" && r.event.exitCode)).toEqual([1, 1, 1, 1]);
  });

  it("never denies a healthy session", async () => {
    const script = [bashCall("ls"), bashCall("node test.js"), bashCall("npm test"), { text: "All done." }];
    await drive(script);
    const main = each.fake!.mainRequests();
    expect(main).toHaveLength(4);
    // The status line and the boundary's notice reached the model at the session's start (the line reads
    // "no spend recorded yet" when the first call found no state to show: the daemon was still starting).
    expect(textsOf(main[0]!).join("\n")).toMatch(
      /(reins is guarding this session|reins: session budget)[\s\S]*reins: not contained: /,
    );
    // Advice may come (context after a call); a deny never does.
    for (const request of main)
      expect(toolResults(request).join("\n")).not.toContain("Denied by preToolUse hook");
    const { log } = await session();
    expect(log.filter((r) => r.decision.verdict === "block")).toEqual([]);
    expect(log.filter((r) => r.event.kind === "verification.ran")).toHaveLength(1);
  });

  it("refuses 'done' once while the checks have not run, then lets it stop", async () => {
    const script = [
      bashCall("echo 'module.exports = 1;' > slug.js"),
      { text: "Done." },
      bashCall("npm test"),
      { text: "Done, tests pass." },
    ];
    await drive(script);
    const main = each.fake!.mainRequests();
    expect(main).toHaveLength(4);
    // The refusal reached the model as its next prompt.
    expect(textsOf(main[2]!).join("\n")).toMatch(/reins: Not done yet: tests has not run \(run `npm test`\)/);
    const { log } = await session();
    expect(log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict)).toEqual([
      "block",
      "allow",
    ]);
  });
});
