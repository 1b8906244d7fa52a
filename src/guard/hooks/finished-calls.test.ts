/** Tests of finding the tool calls that ran with no hook answered: the transcript's side and the store's. */
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultPolicy, resolvePolicy, timeline, type ReinsEvent } from "../../base/core/index.js";
import { Spool } from "../../base/store/spool.js";
import { SqliteStore } from "../../base/store/sqlite.js";
import { finishedCalls } from "./finished-calls.js";
import { unjudgedCalls, unjudgedLine } from "./tamper-check.js";
import { TranscriptReader } from "./transcript.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-finished-"));
  dirs.push(dir);
  return dir;
}

const T0 = Date.UTC(2026, 11, 3, 8, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** An assistant line asking for `tool` under `id`, as Claude Code 2.1.330 writes it. */
const use = (id: string, tool: string) =>
  JSON.stringify({
    type: "assistant",
    timestamp: iso(T0),
    message: { role: "assistant", content: [{ type: "tool_use", id, name: tool, input: {} }] },
  });

/** A user line with the result of `id`, written at `at` (no time when `at` is null). */
const result = (id: string, at: number | null, content: unknown = "ok") =>
  JSON.stringify({
    type: "user",
    ...(at === null ? {} : { timestamp: iso(at) }),
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content }] },
  });

describe("the calls a transcript says finished", () => {
  it("gives each result with its time and its tool's name, in order", () => {
    const text = [
      use("t1", "Bash"),
      result("t1", T0 + 1_000),
      use("t2", "Edit"),
      result("t2", T0 + 2_000),
    ].join("\n");
    expect(finishedCalls(text)).toEqual([
      { id: "t1", at: T0 + 1_000, tool: "Bash" },
      { id: "t2", at: T0 + 2_000, tool: "Edit" },
    ]);
  });

  it("leaves out calls Claude Code refused before any hook, results with no time, and broken lines", () => {
    const refused = [{ type: "text", text: "<tool_use_error>InputValidationError: bad</tool_use_error>" }];
    const text = [
      use("t1", "Bash"),
      result("t1", T0, refused),
      result("t2", T0, "  <tool_use_error>No such tool</tool_use_error>"),
      result("t3", null),
      '{"type":"user","tool_result": broken',
      result("t4", T0 + 5),
    ].join("\n");
    expect(finishedCalls(text)).toEqual([{ id: "t4", at: T0 + 5 }]);
  });

  it("keeps a result whose call was asked for in lines read earlier, without a name", () => {
    expect(finishedCalls(result("old", T0))).toEqual([{ id: "old", at: T0 }]);
  });
});

describe("a reader's finished calls", () => {
  it("are found only by a reading that asks for them, and taken once", () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const reader = new TranscriptReader(join(dir, "cursors"));
    writeFileSync(path, `${use("t1", "Bash")}\n${result("t1", T0)}\n`);
    reader.read("s", path, defaultPolicy);
    expect(reader.finishedCalls("s")).toEqual([]);
    appendFileSync(path, `${use("t2", "Read")}\n${result("t2", T0 + 1)}\n`);
    reader.read("s", path, defaultPolicy, { calls: true });
    expect(reader.finishedCalls("s")).toEqual([{ id: "t2", at: T0 + 1, tool: "Read" }]);
    expect(reader.finishedCalls("s")).toEqual([]);
  });

  it("are not left over from an earlier reading when a later one finds no new lines", () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const reader = new TranscriptReader(join(dir, "cursors"));
    writeFileSync(path, `${use("t1", "Bash")}\n${result("t1", T0)}\n`);
    reader.read("s", path, defaultPolicy, { calls: true });
    reader.read("s", path, defaultPolicy, { calls: true });
    expect(reader.finishedCalls("s")).toEqual([]);
  });
});

describe("calls no hook answer judged", () => {
  const scope = "session:s";

  /** A real SQLite store holding `calls` tool calls (ids call-1...) of `scope`, and its last seq. */
  async function storeWith(calls: number): Promise<{ store: SqliteStore; seq: number }> {
    const store = new SqliteStore(join(tempDir(), "reins.db"));
    const t = timeline({ scope, start: T0, step: 1_000 });
    t.started("claude");
    for (let i = 0; i < calls; i++) t.bash(`echo ${i}`);
    const appended = await store.append(scope, t.events, resolvePolicy({}));
    expect(appended.records).toHaveLength(t.events.length);
    const state = await store.state(scope);
    return { store, seq: state?.seq ?? -1 };
  }

  it("are the calls finished since the mark whose ids the store never saw", async () => {
    const { store, seq } = await storeWith(3);
    const mark = { scope, seq, at: T0 + 10_000 };
    const finished = [
      { id: "call-1", at: T0 + 11_000, tool: "Bash" },
      { id: "toolu_ran_alone", at: T0 + 12_000, tool: "Bash" },
      { id: "toolu_before_mark", at: T0 + 9_000, tool: "Write" },
      { id: "toolu_edit", at: T0 + 13_000, tool: "Edit" },
    ];
    expect((await unjudgedCalls(store, mark, finished)).map((c) => c.id)).toEqual([
      "toolu_ran_alone",
      "toolu_edit",
    ]);
    await store.close();
  });

  it("are not the calls whose events wait in the spool: answered while the store was down, or refused once", async () => {
    const { store, seq } = await storeWith(1);
    const mark = { scope, seq, at: T0 };
    const spool = new Spool(join(tempDir(), "spool"));
    const waiting = timeline({ scope, start: T0 + 5_000, step: 1_000 });
    waiting.bash("echo spooled");
    const spooledId = "toolu_spooled";
    const as = (e: ReinsEvent, callId: string) => ("callId" in e ? { ...e, callId } : e);
    spool.add(
      scope,
      waiting.events.map((e, i) => ({ ...as(e, spooledId), id: `w${i}` })),
    );
    spool.add("session:other", [
      { ...as(waiting.events[0]!, "toolu_other"), scope: "session:other", id: "o" },
    ]);
    const finished = [
      { id: spooledId, at: T0 + 6_000, tool: "Bash" },
      { id: "toolu_other", at: T0 + 7_000, tool: "Bash" },
    ];
    expect(spool.waiting(scope).map((e) => e.id)).toEqual(waiting.events.map((_, i) => `w${i}`));
    // Only the scope's own batches count: the other session's call is still unjudged for this one.
    expect((await unjudgedCalls(store, mark, finished, spool)).map((c) => c.id)).toEqual(["toolu_other"]);
    expect((await unjudgedCalls(store, mark, finished)).map((c) => c.id)).toEqual([spooledId, "toolu_other"]);
    await store.close();
  });

  it("are none when every finished call has its event, even one asked for just before the mark", async () => {
    const { store, seq } = await storeWith(2);
    const mark = { scope, seq: seq + 1, at: T0 };
    const finished = [
      { id: "call-1", at: T0 + 1 },
      { id: "call-2", at: T0 + 2 },
    ];
    expect(await unjudgedCalls(store, mark, finished)).toEqual([]);
    await store.close();
  });

  it("are told in one line: how many, of which tools, the last when", () => {
    const line = unjudgedLine([
      { id: "a", at: T0, tool: "Bash" },
      { id: "b", at: T0 + 60_000, tool: "Bash" },
      { id: "c", at: T0 + 1_000 },
    ]);
    expect(line).toContain("3 tool calls of this session ran with no answer from reins");
    expect(line).toContain("2 Bash, 1 unnamed");
    expect(line).toContain(`the last at ${iso(T0 + 60_000)}`);
    expect(line).not.toContain("\n");
  });
});
