/** The metrics' `agent` label: one name per agent CLI, whichever hook adapter (or older hook) started the session. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, describe, expect, it } from "vitest";
import type { ReinsEvent } from "../base/core/reins-event.js";
import { defaultPolicy } from "../base/core/policy.js";
import type { Store } from "../base/core/store.js";
import { HOOK_AGENTS } from "../guard/hooks/hook-agents.js";
import { AGENT_NAMES } from "../guard/hooks/agent-adapter.js";
import { eventsAt } from "../base/vocabulary/event-builders.js";
import { answerHook } from "../guard/hooks/hook-call.js";
import { TranscriptReader } from "../guard/hooks/transcript.js";
import { usageEvent } from "../base/vocabulary/usage.js";
import { MemoryStore } from "../base/store/memory.js";
import { Spool } from "../base/store/spool.js";
import { agentLabel, createMetrics } from "./metrics.js";
import { StateScan } from "./scan.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Records `tokens` input tokens in `scope`, as any agent's usage is recorded. */
async function spend(store: Store, scope: string, tokens: number, at: number): Promise<void> {
  const usage = usageEvent(
    { id: `u-${scope}`, input: tokens, output: 0, cacheRead: 0, cacheWrite: 0 },
    defaultPolicy,
  );
  await store.append(scope, eventsAt(scope, at, [usage]), defaultPolicy);
}

/** `reins_tokens_used_total` of input tokens in sessions, by agent label, from a scrape of `store`. */
async function inputTokensByAgent(store: Store): Promise<Record<string, number>> {
  const text = await createMetrics(new StateScan(store), defaultPolicy).text(10_000);
  const family = parsePrometheusTextFormat(text).find((f) => f.name === "reins_tokens_used_total");
  const byAgent: Record<string, number> = {};
  for (const m of family?.metrics ?? [])
    if (m.labels?.token_type === "input" && m.labels.budget_type === "session")
      byAgent[m.labels.agent ?? ""] = Number(m.value);
  return byAgent;
}

describe("the agent label", () => {
  it("is the agent's one name for a session started through each agent CLI's hook adapter", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-metrics-"));
    dirs.push(dir);
    const store = new MemoryStore();
    const services = {
      root: dir,
      policy: defaultPolicy,
      store,
      spool: new Spool(join(dir, "spool")),
      transcripts: new TranscriptReader(join(dir, "cursors")),
    };
    for (const [i, name] of AGENT_NAMES.entries()) {
      // Copilot CLI's inputs are camelCase and name no event; reins' opencode and Kilo Code plugin names its
      // calls itself (guard/hooks/opencode.ts).
      const start = name === "opencode" || name === "kilo" ? "session.start" : "SessionStart";
      const input =
        name === "copilot"
          ? { sessionId: `via-${name}`, source: "new", cwd: dir }
          : { session_id: `via-${name}`, hook_event_name: start, cwd: dir };
      const answered = await answerHook(HOOK_AGENTS[name]!, input, services, 1_000);
      expect(answered.warning).toBe("");
      await spend(store, `session:via-${name}`, 100 * (i + 1), 2_000);
    }
    expect(await inputTokensByAgent(store)).toEqual({
      claude: 100,
      codex: 200,
      gemini: 300,
      qwen: 400,
      copilot: 500,
      opencode: 600,
      kilo: 700,
    });
  });

  it("counts sessions that older hooks started as claude-code or gemini-cli under claude and gemini", async () => {
    const store = new MemoryStore();
    const started = (scope: string, agent: string): ReinsEvent[] =>
      eventsAt(scope, 1_000, [{ kind: "session.started", agent }]);
    for (const [scope, agent] of [
      ["session:old-claude", "claude-code"],
      ["session:old-gemini", "gemini-cli"],
      ["session:new-claude", "claude"],
      ["session:elsewhere", "my-own-loop"],
    ] as const) {
      await store.append(scope, started(scope, agent), defaultPolicy);
      await spend(store, scope, 10, 2_000);
    }
    expect(await inputTokensByAgent(store)).toEqual({ claude: 20, gemini: 10, other: 10 });
  });

  it("keeps the label set closed: unknown for no name, other for names reins does not know", () => {
    expect(["claude", "codex", "gemini", "scripted"].map(agentLabel)).toEqual([
      "claude",
      "codex",
      "gemini",
      "scripted",
    ]);
    expect(["claude-code", "gemini-cli"].map(agentLabel)).toEqual(["claude", "gemini"]);
    // The SDK adapters' sessions are theirs, not other's.
    expect(["claude-agent-sdk", "openai-agents", "ai-sdk"].map(agentLabel)).toEqual([
      "claude-agent-sdk",
      "openai-agents",
      "ai-sdk",
    ]);
    expect(["", "toString", "__proto__", "codex-cli"].map(agentLabel)).toEqual([
      "unknown",
      "other",
      "other",
      "other",
    ]);
  });
});
