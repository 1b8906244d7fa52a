/** The golden traces: each replays to the decisions it recorded. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";

/**
 * Golden traces: every judgement bug found becomes a trace here (recorded with the real Claude Code CLI by
 * test/judgement-e2e.test.ts with REINS_RECORD_TRACES=1, or from the efficacy benchmark's scripted sessions
 * by scripts/record-traces.js). `reins check` replays each with today's engine under the policy it was
 * recorded with; a decision that changes fails the run until it is deliberately re-recorded.
 */
const dir = join(import.meta.dirname, "..", "traces");
const traces = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));

describe("golden traces", () => {
  it("there are traces to check", () => {
    expect(traces.length).toBeGreaterThan(10);
  });

  for (const trace of traces) {
    it(`${trace} replays to its recorded decisions`, async () => {
      const io = memoryIo({ cwd: dir });
      const code = await run(["check", join(dir, trace)], io);
      expect(io.out.join("") + io.err.join(""), trace).toMatch(
        /^ok: \d+ events replayed, \d+ recorded decisions match/,
      );
      expect(code).toBe(0);
    });
  }
});
