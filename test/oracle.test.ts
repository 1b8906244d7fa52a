import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultPolicy } from "../src/base/core/policy.js";
import { review, type OracleConfig } from "../src/run/oracle/review.js";
import type { ReviewInput } from "../src/run/oracle/prompt.js";
import { claudeBinary, claudeUnavailableReason } from "#test/claude-code.js";
import { startFakeAnthropic, userTexts, type FakeAnthropic } from "#test/fake-anthropic.js";
import { startFakeChatCompletions } from "#test/fake-openai.js";
import { cleanEnv } from "#test/processes.js";

/** The oracle's reviewer against scripted model APIs on 127.0.0.1, and through the real Claude Code. */

const INPUT: ReviewInput = {
  title: "task add: Implement add",
  acceptance: ["src/add.js exports add(a, b), their sum"],
  diff: "+export const add = (a, b) => a - b;\n",
  filesChanged: ["src/add.js"],
  checks: [{ name: "add", command: "node --test test/add.test.js", passed: true }],
};

const VETO = JSON.stringify({
  veto: true,
  confidence: 0.9,
  findings: ["add subtracts"],
  summary: "wrong sign",
});
const APPROVE = `Looks right.\n\`\`\`json\n${JSON.stringify({ veto: false, confidence: 0.8, findings: [], summary: "sums" })}\n\`\`\``;

const config = (over: Partial<OracleConfig>): OracleConfig => ({
  ...defaultPolicy.oracle,
  enabled: true,
  ...over,
});
const env = { ORACLE_KEY: "sk-test" };

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function anthropic(script: Parameters<typeof startFakeAnthropic>[0]): Promise<FakeAnthropic> {
  const fake = await startFakeAnthropic(script, { isMain: () => true });
  closers.push(() => fake.close());
  return fake;
}

describe("the Anthropic-compatible endpoint", () => {
  it("sends the evidence with the key and reads a veto", async () => {
    const fake = await anthropic([{ text: VETO }]);
    const outcome = await review(
      config({ via: "anthropic", url: fake.url, model: "fake-haiku", apiKeyEnv: "ORACLE_KEY" }),
      INPUT,
      { env },
    );
    expect(outcome).toEqual({
      kind: "vetoed",
      reviewer: "anthropic:fake-haiku",
      verdict: { veto: true, confidence: 0.9, findings: ["add subtracts"], summary: "wrong sign" },
    });
    const [request] = fake.mainRequests();
    expect(request?.path).toBe("/v1/messages");
    expect(request?.headers["x-api-key"]).toBe("sk-test");
    expect(request?.body?.stream).toBeUndefined();
    expect(request?.body?.system).toMatch(/only veto/);
    const prompt = request === undefined ? "" : userTexts(request).join("\n");
    expect(prompt).toContain("src/add.js exports add(a, b), their sum");
    expect(prompt).toContain("a - b");
  });

  it("reads an approval inside prose and a code fence", async () => {
    const fake = await anthropic([{ text: APPROVE }]);
    const outcome = await review(
      config({ via: "anthropic", url: fake.url, model: "m", apiKeyEnv: "ORACLE_KEY" }),
      INPUT,
      { env },
    );
    expect(outcome.kind).toBe("approved");
  });

  it("fails, without vetoing, on an HTTP error, a garbage answer, a timeout or a missing key", async () => {
    const failing = await anthropic([{ error: { status: 500, type: "api_error", message: "boom" } }]);
    const garbage = await anthropic([{ text: "I cannot decide." }]);
    const slow = await anthropic(() => new Promise((done) => setTimeout(() => done({ text: VETO }), 3_000)));
    const outcomes = await Promise.all([
      review(config({ via: "anthropic", url: failing.url, model: "m", apiKeyEnv: "ORACLE_KEY" }), INPUT, {
        env,
      }),
      review(config({ via: "anthropic", url: garbage.url, model: "m", apiKeyEnv: "ORACLE_KEY" }), INPUT, {
        env,
      }),
      review(
        config({ via: "anthropic", url: slow.url, model: "m", apiKeyEnv: "ORACLE_KEY", timeoutMs: 300 }),
        INPUT,
        { env },
      ),
      review(config({ via: "anthropic", url: garbage.url, model: "m", apiKeyEnv: "ORACLE_KEY" }), INPUT, {
        env: {},
      }),
      review(
        config({ via: "anthropic", url: "http://127.0.0.1:1", model: "m", apiKeyEnv: "ORACLE_KEY" }),
        INPUT,
        { env },
      ),
    ]);
    const reasons = outcomes.map((o) => (o.kind === "failed" ? o.reason : `not failed: ${o.kind}`));
    expect(reasons[0]).toMatch(/HTTP 500.*boom/);
    expect(reasons[1]).toMatch(/no JSON verdict/);
    expect(reasons[2]).toMatch(/no answer within 300 ms/);
    expect(reasons[3]).toMatch(/ORACLE_KEY is not set/);
    expect(reasons[4]).toMatch(/127\.0\.0\.1:1/);
    for (const reason of reasons) expect(reason).not.toMatch(/\n/);
  });
});

describe("the OpenAI-compatible endpoint", () => {
  it("posts a chat completion with a bearer key and reads the verdict", async () => {
    const fake = await startFakeChatCompletions([
      { text: VETO },
      { text: APPROVE },
      { error: { status: 401, type: "auth", message: "bad key" } },
    ]);
    closers.push(() => fake.close());
    const openai = config({ via: "openai", url: fake.url, model: "gpt-fake", apiKeyEnv: "ORACLE_KEY" });
    expect((await review(openai, INPUT, { env })).kind).toBe("vetoed");
    // Without its `/v1`, the same URL.
    expect((await review({ ...openai, url: fake.url.replace(/\/v1$/, "") }, INPUT, { env })).kind).toBe(
      "approved",
    );
    const failed = await review(openai, INPUT, { env });
    expect(failed.kind === "failed" && failed.reason).toMatch(/HTTP 401.*bad key/);
    const [request] = fake.mainRequests();
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe("Bearer sk-test");
    expect(request?.body?.model).toBe("gpt-fake");
    expect(request?.body?.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });
});

describe.skipIf(claudeUnavailableReason() !== null)("the agent CLI: the real Claude Code", () => {
  it(
    "asks claude -p with the prompt on stdin and reads the verdict of its final message",
    { timeout: 30_000 },
    async () => {
      const fake = await anthropic((request) =>
        userTexts(request).some((t) => t.includes("reins oracle review")) ? { text: VETO } : { text: "no" },
      );
      const home = mkdtempSync(join(tmpdir(), "reins-oracle-home-"));
      closers.push(() => rmSync(home, { recursive: true, force: true }));
      const outcome = await review(config({ via: "claude", timeoutMs: 25_000 }), INPUT, {
        bin: claudeBinary,
        env: cleanEnv(home, {
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: "test",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        }),
      });
      expect(outcome).toMatchObject({
        kind: "vetoed",
        reviewer: "claude:haiku",
        verdict: { findings: ["add subtracts"] },
      });
      const asked = fake
        .mainRequests()
        .find((r) => userTexts(r).some((t) => t.includes("reins oracle review")));
      expect(asked?.body?.model).toMatch(/haiku/);
    },
  );
});

describe("the agent CLI: Codex and Gemini invocations", () => {
  /** A stand-in CLI that records its arguments, folder and stdin, then prints `stdout`. */
  function standIn(stdout: string): {
    bin: string;
    seen: () => { args: string[]; cwd: string; stdin: string };
  } {
    const dir = mkdtempSync(join(tmpdir(), "reins-oracle-cli-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const bin = join(dir, "cli.mjs");
    const out = join(dir, "seen.json");
    writeFileSync(
      bin,
      `import { readFileSync, writeFileSync } from "node:fs";
const stdin = readFileSync(0, "utf8");
writeFileSync(${JSON.stringify(out)}, JSON.stringify({ args: process.argv.slice(2), cwd: process.cwd(), stdin }));
process.stdout.write(${JSON.stringify(stdout)});
`,
    );
    return {
      bin,
      seen: () => JSON.parse(readFileSync(out, "utf8")) as { args: string[]; cwd: string; stdin: string },
    };
  }

  it("runs codex exec read-only with the model, the prompt on stdin, in an empty folder", async () => {
    const events = [
      { type: "thread.started", thread_id: "t1" },
      { type: "item.completed", item: { id: "i0", type: "agent_message", text: VETO } },
      { type: "turn.completed", usage: { input_tokens: 10, output_tokens: 5 } },
    ];
    const cli = standIn(events.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const outcome = await review(config({ via: "codex", model: "gpt-5-mini" }), INPUT, { bin: cli.bin });
    expect(outcome).toMatchObject({ kind: "vetoed", reviewer: "codex:gpt-5-mini" });
    const seen = cli.seen();
    expect(seen.args).toEqual(
      expect.arrayContaining(["exec", "--sandbox", "read-only", "-m", "gpt-5-mini", "-"]),
    );
    expect(seen.stdin).toContain("reins oracle review");
    expect(seen.cwd).toMatch(/reins-oracle-/);
    expect(existsSync(seen.cwd)).toBe(false);
  });

  it("runs gemini with the model; a CLI that fails is a failed review, not a veto", async () => {
    const cli = standIn("not json at all\n");
    const outcome = await review(config({ via: "gemini", model: "gemini-2.5-flash" }), INPUT, {
      bin: cli.bin,
    });
    expect(outcome.kind).toBe("failed");
    expect(outcome.reviewer).toBe("gemini:gemini-2.5-flash");
    expect(cli.seen().args).toEqual(expect.arrayContaining(["-m", "gemini-2.5-flash"]));
  });
});
