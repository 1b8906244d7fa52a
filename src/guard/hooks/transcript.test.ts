/** Tests of reading usage from Claude Code transcripts, and of pricing it. */
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, runBounded } from "#test/processes.js";
import { defaultPolicy } from "../../base/core/policy.js";
import { TranscriptReader } from "./transcript.js";
import { usageEvent } from "../../base/vocabulary/usage.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary folder, removed after the tests. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-transcript-"));
  dirs.push(dir);
  return dir;
}

/** One assistant line of a Claude Code transcript, as 2.1.330 writes it, with `content` of any size. */
function assistant(id: string, content: string, input = 1_000): string {
  return `${JSON.stringify({
    parentUuid: "p",
    type: "assistant",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "tool_use", id: `toolu_${id}`, name: "Write", input: { file_path: "big.txt", content } },
      ],
      usage: { input_tokens: input, output_tokens: 100, cache_read_input_tokens: 0 },
    },
    requestId: `req_${id}`,
  })}\n`;
}

describe("reading a transcript's usage", () => {
  it("keeps counting after a line over the 8 MB read window, and counts that line's own usage", () => {
    const dir = tempDir();
    const path = join(dir, "session.jsonl");
    const reader = new TranscriptReader(join(dir, "cursors"));
    writeFileSync(path, assistant("m1", "small"));
    expect(reader.read("s", path, defaultPolicy).map((e) => e.id)).toHaveLength(1);

    // A 9 MB Write: its line alone is larger than what one hook call reads.
    appendFileSync(path, assistant("m2", "x".repeat(9 * 1024 * 1024), 2_000));
    appendFileSync(path, assistant("m3", "after", 3_000));
    const events = [...reader.read("s", path, defaultPolicy), ...reader.read("s", path, defaultPolicy)];
    expect(events.map((e) => (e.kind === "usage.recorded" ? e.inputTokens : 0))).toEqual([2_000, 3_000]);

    appendFileSync(path, assistant("m4", "later", 4_000));
    expect(
      reader.read("s", path, defaultPolicy).map((e) => (e.kind === "usage.recorded" ? e.inputTokens : 0)),
    ).toEqual([4_000]);
  });

  it("waits for a long line that is still being written, and reads it once it ends", () => {
    const dir = tempDir();
    const path = join(dir, "session.jsonl");
    const reader = new TranscriptReader(join(dir, "cursors"));
    const line = assistant("m1", "y".repeat(9 * 1024 * 1024), 5_000);
    writeFileSync(path, line.slice(0, -200));
    expect(reader.read("s", path, defaultPolicy)).toEqual([]);
    appendFileSync(path, line.slice(-200));
    expect(
      reader.read("s", path, defaultPolicy).map((e) => (e.kind === "usage.recorded" ? e.inputTokens : 0)),
    ).toEqual([5_000]);
  });
});

describe("a transcript path that is not a regular file", () => {
  it("is not opened: a FIFO would block the hook until someone writes to it", async () => {
    const dir = tempDir();
    const fifo = join(dir, "fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    // Opening a FIFO blocks the whole thread, which no timeout of this process can interrupt: the reads run
    // in a child (on the built dist/, as the hooks do), killed if it does not finish on its own.
    const dist = (path: string) =>
      JSON.stringify(pathToFileURL(join(import.meta.dirname, "..", "..", "..", "dist", path)).href);
    const script = `
      import { TranscriptReader } from ${dist("guard/hooks/transcript.js")};
      import { defaultPolicy } from ${dist("base/core/policy.js")};
      const reader = new TranscriptReader(${JSON.stringify(join(dir, "cursors"))});
      const fifo = ${JSON.stringify(fifo)};
      console.log(JSON.stringify({
        read: reader.read("s", fifo, defaultPolicy),
        rollout: reader.readRollout("s", fifo, defaultPolicy).usage,
      }));`;
    const child = await runBounded(process.execPath, ["--input-type=module", "-e", script], {
      cwd: dir,
      env: cleanEnv(dir),
      timeoutMs: 20_000,
    });
    expect(child.timedOut, "the child was killed: reading the FIFO hung").toBe(false);
    expect([child.code, child.signal, child.stderr]).toEqual([0, null, ""]);
    expect(JSON.parse(child.stdout)).toEqual({ read: [], rollout: [] });

    const reader = new TranscriptReader(join(dir, "cursors"));
    expect(reader.read("s", dir, defaultPolicy)).toEqual([]);
  });
});

describe("pricing a model's usage", () => {
  const usage = { id: "m", input: 150_000, output: 1_000, cacheRead: 0, cacheWrite: 0 };
  const priced = (model: string, extra: Partial<typeof usage> & { costUsd?: number } = {}) =>
    usageEvent({ ...usage, ...extra, model }, defaultPolicy);

  it("prices a model the table does not list by its family, and says so", () => {
    // Claude Code 2.1.330 reports claude-opus-5-5: priced as the Opus family, never as free.
    const event = priced("claude-opus-5-5");
    expect(event).toMatchObject({ kind: "usage.recorded", costUsd: 2.325, pricing: "family:claude-opus-4" });
    expect(priced("gemini-3-pro-preview")).toMatchObject({ pricing: "family:gemini-2.5-pro" });
    expect(priced("google/gemini-3-pro-preview")).toMatchObject({ pricing: "family:gemini-2.5-pro" });
  });

  it("prices a model of no known family at the table's highest price, never at $0", () => {
    const event = priced("mystery-model-9");
    expect(event).toMatchObject({ pricing: "unknown" });
    expect(event.kind === "usage.recorded" && (event.costUsd ?? 0)).toBeGreaterThanOrEqual(2.325);
  });

  it("prefers the cost the agent reports, and a listed model's own price", () => {
    expect(priced("claude-opus-5-5", { costUsd: 0.5 })).toMatchObject({ costUsd: 0.5, pricing: "agent" });
    expect(priced("claude-sonnet-4-5")).toMatchObject({ costUsd: 0.465, pricing: "table" });
  });
});
