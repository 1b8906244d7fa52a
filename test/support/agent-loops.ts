/**
 * One failing loop per agent CLI, for the tests that run many agents at once: the real CLI in a project
 * against its scripted model API, seven identical failing calls then a final answer, each reply reporting
 * the given token usage. Each says which call was first denied and how many tokens the model reported.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { SqliteStore } from "../../src/base/store/sqlite.js";
import { claudeUnavailableReason, runClaude } from "./claude-code.js";
import { codexUnavailableReason, runCodex } from "./codex-cli.js";
import { lastToolResults, startFakeAnthropic } from "./fake-anthropic.js";
import { lastFunctionResponses, shellCommand, startFakeGemini } from "./fake-gemini.js";
import { execCommand, lastFunctionCallOutputs, startFakeOpenAi } from "./fake-openai.js";
import { geminiUnavailableReason, runGemini } from "./gemini-cli.js";
import { lastToolResults as lastChatToolResults, startFakeChatTools, toolCall } from "./fake-chat-tools.js";
import { qwenUnavailableReason, runQwen } from "./qwen-cli.js";
import { copilotSessions, copilotUnavailableReason, runCopilot } from "./copilot-cli.js";
import { bashCall, startFakeChatStream, toolResults } from "./fake-chat-stream.js";
import { startFakeChat, toolResults as chatToolResults } from "./fake-chat.js";
import { opencodeUnavailableReason, runOpencode } from "./opencode-cli.js";

/** Where and how one loop runs: the project, the user's HOME, the tokens each reply reports, extra env. */
export interface LoopSpec {
  project: string;
  home: string;
  input: number;
  output: number;
  env: Record<string, string>;
}

/** What one loop did: its session, which tool call was first denied (1-based), the tokens the model reported. */
export interface LoopResult {
  sessionId: string;
  firstDenied: number | null;
  tokens: number;
}

/** An agent's failing loop, and why it cannot run here (null when it can). */
export interface AgentLoop {
  unavailable(): string | null;
  run(spec: LoopSpec): Promise<LoopResult>;
}

/** The identical failing calls of every loop. */
const CALLS = 7;
const COMMAND = "node fail.js";
const TIMEOUT_MS = 180_000;

/** The 1-based position of the first text matching, or null. */
export function firstMatch(texts: string[], pattern: RegExp): number | null {
  const at = texts.findIndex((t) => pattern.test(t));
  return at < 0 ? null : at + 1;
}

const claude: AgentLoop = {
  unavailable: claudeUnavailableReason,
  async run({ project, home, input, output, env }) {
    const usage = { input_tokens: input, output_tokens: output };
    const fake = await startFakeAnthropic((_r, turn) =>
      turn < CALLS
        ? { toolUses: [{ name: "Bash", input: { command: COMMAND, description: "run" } }], usage }
        : { text: "Stopping.", usage },
    );
    try {
      const result = await runClaude({
        cwd: project,
        home,
        prompt: "Do the task.",
        baseUrl: fake.url,
        maxTurns: 12,
        timeoutMs: TIMEOUT_MS,
        env,
      });
      expect(result.timedOut, result.stderr).toBe(false);
      const results = fake.mainRequests().map((r) => lastToolResults(r)[0]?.text ?? "");
      return {
        sessionId: result.json?.session_id ?? "",
        firstDenied: firstMatch(results.slice(1), /hook error: reins:/),
        tokens: fake.mainRequests().length * (input + output),
      };
    } finally {
      await fake.close();
    }
  },
};

const codex: AgentLoop = {
  unavailable: codexUnavailableReason,
  async run({ project, home, input, output, env }) {
    const usage = { input_tokens: input, output_tokens: output };
    const fake = await startFakeOpenAi((_r, turn) =>
      turn < CALLS ? execCommand(COMMAND, usage) : { text: "Stopping.", usage },
    );
    try {
      // hooks: false: only the trust `reins init codex` wrote, no bypass.
      const result = await runCodex({
        cwd: project,
        home,
        prompt: "Do the task.",
        baseUrl: fake.url,
        timeoutMs: TIMEOUT_MS,
        hooks: false,
        env,
      });
      expect(result.timedOut, result.stderr).toBe(false);
      const outputs = fake.mainRequests().map((r) => lastFunctionCallOutputs(r)[0]?.text ?? "");
      return {
        sessionId: result.threadId ?? "",
        firstDenied: firstMatch(outputs.slice(1), /blocked by PreToolUse hook: reins:/),
        tokens: fake.mainRequests().length * (input + output),
      };
    } finally {
      await fake.close();
    }
  },
};

const gemini: AgentLoop = {
  unavailable: geminiUnavailableReason,
  async run({ project, home, input, output, env }) {
    const usage = { promptTokenCount: input, candidatesTokenCount: output };
    const fake = await startFakeGemini((_r, turn) =>
      turn < CALLS ? shellCommand(COMMAND, usage) : { text: "Stopping.", usage },
    );
    try {
      const result = await runGemini({
        cwd: project,
        home,
        prompt: "Do the task.",
        baseUrl: fake.url,
        timeoutMs: TIMEOUT_MS,
        env,
      });
      expect(result.timedOut, result.stderr).toBe(false);
      const answers = fake.mainRequests().map((r) => lastFunctionResponses(r)[0]?.error ?? "");
      return {
        sessionId: result.sessionId ?? "",
        firstDenied: firstMatch(answers.slice(1), /reins:/),
        tokens: fake.mainRequests().length * (input + output),
      };
    } finally {
      await fake.close();
    }
  },
};

const qwen: AgentLoop = {
  unavailable: qwenUnavailableReason,
  async run({ project, home, input, output, env }) {
    const usage = { input_tokens: input, output_tokens: output };
    const fake = await startFakeChatTools((_r, turn) =>
      turn < CALLS
        ? toolCall("run_shell_command", { command: COMMAND, description: "run", is_background: false }, usage)
        : { text: "Stopping.", usage },
    );
    try {
      const result = await runQwen({
        cwd: project,
        home,
        prompt: "Do the task.",
        baseUrl: fake.url,
        timeoutMs: TIMEOUT_MS,
        env,
      });
      expect(result.timedOut, result.stderr).toBe(false);
      const answers = fake.mainRequests().map((r) => lastChatToolResults(r)[0]?.text ?? "");
      // A call that ran carries the command's error (reins' note may follow it); a denied one only reins' reason.
      const denied = answers.slice(1).map((a) => (a.includes("ECONNREFUSED") ? "" : a));
      return {
        sessionId: result.sessionId ?? "",
        firstDenied: firstMatch(denied, /reins:/),
        // Every answer the API sent, side requests included, as reins counts them.
        tokens: fake.usageSent.reduce(
          (n, u) => n + u.total_tokens - u.prompt_tokens_details.cached_tokens,
          0,
        ),
      };
    } finally {
      await fake.close();
    }
  },
};

const copilot: AgentLoop = {
  unavailable: copilotUnavailableReason,
  async run({ project, home, input, output, env }) {
    const usage = { prompt_tokens: input, completion_tokens: output };
    const fake = await startFakeChatStream((_r, turn) =>
      turn < CALLS ? bashCall(COMMAND, usage) : { text: "Stopping.", usage },
    );
    try {
      const before = new Set(copilotSessions(home));
      const result = await runCopilot({
        cwd: project,
        home,
        prompt: "Do the task.",
        baseUrl: fake.url,
        timeoutMs: TIMEOUT_MS,
        env,
      });
      expect(result.timedOut, result.stderr).toBe(false);
      const results = fake.mainRequests().map((r) => toolResults(r).at(-1) ?? "");
      return {
        sessionId: copilotSessions(home).find((id) => !before.has(id)) ?? "",
        firstDenied: firstMatch(results.slice(1), /^Denied by preToolUse hook: reins:/),
        tokens: fake.sent.tokens,
      };
    } finally {
      await fake.close();
    }
  },
};

/** The sessions the project's store holds. */
async function sessionsOf(project: string): Promise<string[]> {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    return (await store.scopes()).filter((s) => s.startsWith("session:")).map((s) => s.slice(8));
  } catch {
    return []; // no store yet
  } finally {
    await store.close();
  }
}

/** opencode and Kilo Code, through reins' plugin: their session is the one new in the project's store. */
function pluginLoop(agent: "opencode" | "kilo"): AgentLoop {
  return {
    unavailable: opencodeUnavailableReason(agent),
    async run({ project, home, input, output }) {
      const usage = { prompt: input, completion: output };
      const call = { name: "bash", arguments: { command: COMMAND, description: "run" } };
      const fake = await startFakeChat((_r, turn) =>
        turn < CALLS ? { toolCalls: [call], usage } : { text: "Stopping.", usage },
      );
      try {
        // The CLI's provider file points at the fake; it is the test's, kept out of git.
        appendFileSync(join(project, ".git", "info", "exclude"), `\n/${agent}.json\n`);
        const before = new Set(await sessionsOf(project));
        const result = await runOpencode({
          agent,
          cwd: project,
          home,
          prompt: "Do the task.",
          baseUrl: fake.url,
          timeoutMs: TIMEOUT_MS,
        });
        expect(result.timedOut, result.stderr).toBe(false);
        const results = fake.mainRequests().map((r) => chatToolResults(r).at(-1) ?? "");
        return {
          sessionId: (await sessionsOf(project)).find((id) => !before.has(id)) ?? "",
          firstDenied: firstMatch(results.slice(1), /^reins: /),
          // Its title request reaches no plugin event (docs/agent-opencode.md): the session's turns only.
          tokens: fake.sent.input + fake.sent.output,
        };
      } finally {
        await fake.close();
      }
    },
  };
}

/** Every agent CLI with a failing loop, by the name `reins init` knows it by. */
export const AGENT_LOOPS = {
  claude,
  codex,
  gemini,
  qwen,
  copilot,
  opencode: pluginLoop("opencode"),
  kilo: pluginLoop("kilo"),
} satisfies Record<string, AgentLoop>;

/** The agents of AGENT_LOOPS. */
export type LoopAgent = keyof typeof AGENT_LOOPS;
