/**
 * The state of a scope stays under STATE_BOUND_BYTES (bytes of JSON, UTF-8) whatever events it sees: a
 * million of them, many distinct and long, or hostile ones with huge strings and characters that JSON escapes.
 * The events come from a seeded generator (mulberry32), so every run feeds exactly the same events; to try
 * another stream, change SEED or run with `REINS_SEED=123 npx vitest run src/base/core/state-bound.test.ts`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_TEXT, clip } from "./capped.js";
import { advance } from "./engine.js";
import type { BudgetResource, ReinsEvent, ToolTouch } from "./reins-event.js";
import { defaultPolicy } from "./policy.js";
import { seeded } from "./seeded.js";
import { CAPS, STATE_BOUND_BYTES, initialState, type State } from "./state.js";

const SEED = Number(process.env.REINS_SEED ?? 20261101);

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event without its time and scope. */
type Body = DistributiveOmit<ReinsEvent, "at" | "scope">;

/** Bytes of the state as JSON text, UTF-8: what a store writes. */
const jsonBytes = (state: State) => Buffer.byteLength(JSON.stringify(state), "utf8");

const LONG = Array.from(
  { length: 10_240 },
  (_, i) => "abcdefghijklmnopqrstuvwxyz/._- 0123456789"[i % 41],
).join("");

/** A deterministic stream of realistic and not so realistic events for one session. */
function stream(seed: number, scope: string) {
  const random = seeded(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  let serial = 0;
  /** Mostly a few repeating values; often a new one; sometimes one up to 10 KB long. */
  const text = (kind: string): string => {
    const r = random();
    if (r < 0.5) return `${kind}-${int(6)}`;
    const len = r < 0.97 ? int(300) : int(LONG.length);
    return `${kind}/${++serial}/${LONG.slice(0, len)}`;
  };
  const resources: BudgetResource[] = ["tokens", "usd", "toolCalls", "wallTimeMs", "premiumRequests"];
  let at = 1_790_000_000_000;
  let touch: ToolTouch | null = null;

  return (): ReinsEvent => {
    at += random() < 0.01 ? 60_000 + int(600_000) : int(2_000);
    const base = { at, scope, ...(random() < 0.2 ? { task: text("task") } : {}) };
    const r = random();
    if (r < 0.3 || (r < 0.5 && touch === null)) {
      const tool = random() < 0.05 ? text("Tool") : pick(["Bash", "Read", "Edit", "Write", "Grep"]);
      touch = {
        tool,
        inputHash: text("in"),
        shapeHash: text("shape"),
        ...(random() < 0.6 ? { command: text("npm run") } : {}),
        ...(random() < 0.5 ? { reads: [text("src/read"), text("docs/read")] } : {}),
        ...(random() < 0.5 ? { writes: [text("src/write")], linesChanged: int(500) } : {}),
      };
      return { kind: "tool.requested", ...base, ...touch };
    }
    if (r < 0.5 && touch !== null) {
      const outcome = pick(["success", "success", "failure", "timeout"] as const);
      return {
        kind: "tool.completed",
        ...base,
        ...touch,
        outcome,
        outputHash: text("out"),
        ...(outcome === "success" ? {} : { errorHash: text("err") }),
      };
    }
    if (r < 0.62) {
      return {
        kind: "usage.recorded",
        ...base,
        inputTokens: int(30_000),
        outputTokens: int(5_000),
        cacheReadTokens: int(100_000),
        cacheWriteTokens: int(5_000),
        costUsd: random() / 10,
      };
    }
    if (r < 0.72) {
      return {
        kind: "verification.ran",
        ...base,
        name: text("check"),
        passed: random() < 0.5,
        score: random(),
        flagged: [text("src/flagged"), text("src/flagged")],
        command: text("npm run"),
      };
    }
    if (r < 0.77)
      return { kind: "iteration.ended", ...base, outcome: random() < 0.5 ? "success" : "failure" };
    if (r < 0.83) return { kind: "task.started", ...base, task: text("task"), taskType: text("type") };
    if (r < 0.87)
      return {
        kind: "task.ended",
        ...base,
        task: text("task"),
        status: pick(["done", "failed", "canceled"]),
      };
    if (r < 0.89) return { kind: "completion.claimed", ...base, level: pick(["session", "task", "module"]) };
    if (r < 0.95) {
      const human = { ...base, by: text("person"), reason: text("reason") };
      switch (int(6)) {
        case 0:
          return { kind: "human.budget_extended", ...human, resource: pick(resources), amount: int(100_000) };
        case 1:
          return { kind: "human.budget_reset", ...human };
        case 2:
          return { kind: "human.circuit_acknowledged", ...human };
        case 3:
          return { kind: "human.circuit_reset", ...human };
        case 4:
          return { kind: "human.alert_acknowledged", ...human, alertId: text("alert") };
        default:
          return { kind: "human.confirmed", ...human };
      }
    }
    return random() < 0.5
      ? { kind: "session.started", ...base, agent: text("agent"), model: text("model") }
      : { kind: "session.ended", ...base, reason: text("reason") };
  };
}

describe("state bound", () => {
  it("stays under STATE_BOUND_BYTES over a million events into one session", { timeout: 60_000 }, () => {
    const scope = "session:million";
    const next = stream(SEED, scope);
    const state = initialState(scope);
    const sizes: number[] = [];
    for (let i = 1; i <= 1_000_000; i++) {
      advance(state, next(), defaultPolicy);
      if (i % 100_000 === 0) {
        const size = jsonBytes(state);
        sizes.push(size);
        expect(size, `after ${i} events`).toBeLessThan(STATE_BOUND_BYTES);
      }
    }
    console.log(`state size (bytes of JSON) every 100,000 events: ${sizes.join(", ")}`);
    expect(state.seq).toBe(1_000_000);
    // The stream is varied enough to fill the bounded collections, so the bound is really exercised.
    expect(Object.keys(state.resources)).toHaveLength(CAPS.resources);
    expect(Object.keys(state.reads)).toHaveLength(CAPS.reads);
    expect(Object.keys(state.checks)).toHaveLength(CAPS.checks);
    expect(Object.keys(state.budget.tasks)).toHaveLength(CAPS.tasks);
  });

  it("clip keeps any text within MAX_TEXT bytes of JSON, and plain text as it was", () => {
    const jsonText = (text: string) => Buffer.byteLength(JSON.stringify(text), "utf8") - 2;
    const anyText = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 400 }),
      fc.string({ unit: "binary", maxLength: 400 }),
      fc.string({
        unit: fc.constantFrom("a", '"', "\\", "\n", "\u0001", "é", "€", "😀", "\ud800"),
        maxLength: 400,
      }),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        const cut = clip(text);
        expect(jsonText(cut)).toBeLessThanOrEqual(MAX_TEXT);
        // An inherited property name (`constructor`) is marked, so it never reads the prototype as a key.
        const inherited = text in Object.prototype || text === "__proto__" || text === "prototype";
        if (inherited) expect(cut).toBe(`${text}\u200b`);
        else if (text.length <= MAX_TEXT && /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(text))
          expect(cut).toBe(text);
        if (cut !== text && !inherited) expect(cut.endsWith(`…[${text.length}]`)).toBe(true);
      }),
      { seed: SEED, numRuns: 1_000 },
    );
    const plain = "abc/def ".repeat(100);
    expect(clip(plain.slice(0, 256))).toBe(plain.slice(0, 256));
    expect(clip(plain)).toBe(`${plain.slice(0, 240)}…[800]`);
  });

  describe("hostile input", () => {
    const MB = 1 << 20;

    it("a 1 MB path, command, tool, task, check name and hash do not grow the state", () => {
      const scope = "session:huge";
      const state = initialState(scope);
      let at = 1_790_000_000_000;
      const huge = (tag: string) => `${tag}:${"x".repeat(MB)}`;
      const apply = (event: Body) => advance(state, { ...event, at: (at += 1_000), scope }, defaultPolicy);
      const touch = {
        tool: huge("tool"),
        inputHash: huge("in"),
        shapeHash: huge("shape"),
        command: huge("cmd"),
        reads: [huge("read")],
        writes: [huge("write")],
        callId: huge("call"),
      };
      apply({ kind: "task.started", task: huge("task"), taskType: huge("type") });
      // Five identical calls trip the breaker, whose reason names the (huge) tool and command.
      for (let i = 0; i < 5; i++) {
        apply({ kind: "tool.requested", ...touch, task: huge("task") });
        apply({
          kind: "tool.completed",
          ...touch,
          outcome: "failure",
          outputHash: huge("out"),
          errorHash: huge("err"),
        });
      }
      expect(state.breaker.status).toBe("open");
      apply({ kind: "human.circuit_reset", by: huge("by"), reason: huge("why") });
      // Three failed checks trip it again, and its reason names the (huge) check.
      for (let i = 0; i < 3; i++) {
        apply({ kind: "verification.ran", name: huge("check"), passed: false, flagged: [huge("flag")] });
      }
      expect(state.breaker.reason).toBe("failed_verifications");
      apply({ kind: "human.alert_acknowledged", by: huge("by"), alertId: huge("alert") });
      apply({ kind: "iteration.ended", outcome: "failure" });
      apply({ kind: "task.ended", task: huge("task"), status: "failed" });
      const size = jsonBytes(state);
      expect(size).toBeLessThan(32 * 1024);
    });

    /**
     * Every bounded collection filled with long, distinct strings made of one kind of character: plain, ones
     * JSON escapes (quote, backslash, control characters), and ones that take 2 to 4 bytes in UTF-8.
     */
    it.each([
      ["plain ASCII", "x"],
      ["quotes", '"'],
      ["backslashes", "\\"],
      ["control characters", "\u0001"],
      ["new lines", "\n"],
      ["2-byte UTF-8", "é"],
      ["3-byte UTF-8", "€"],
      ["emoji (surrogate pairs)", "😀"],
      ["lone surrogates", "\ud800"],
    ])("%s in every string keep the state under the bound", (_, char) => {
      const scope = "session:hostile";
      const state = initialState(scope);
      let at = 1_790_000_000_000;
      const apply = (event: Body) => advance(state, { ...event, at: (at += 1_000), scope }, defaultPolicy);
      const long = char.repeat(4_096);
      for (let i = 0; i < 80; i++) {
        const s = (tag: string) => `${i}${tag}${long}`;
        const task = s("task");
        apply({ kind: "task.started", task, taskType: s("type") });
        for (let j = 0; j < 2; j++) {
          const touch = {
            task,
            tool: s(`tool${j}`),
            inputHash: s(`in${j}`),
            shapeHash: s("shape"),
            command: s(`cmd${j}`),
            reads: [s(`read${j}`)],
            writes: [s(`write${j}`)],
            linesChanged: 1,
          };
          apply({ kind: "tool.requested", ...touch });
          apply({
            kind: "tool.completed",
            ...touch,
            outcome: "failure",
            outputHash: s("o"),
            errorHash: s("e"),
          });
        }
        apply({
          kind: "verification.ran",
          task,
          name: s("check"),
          passed: false,
          command: s("v"),
          flagged: [s("f")],
        });
        apply({ kind: "iteration.ended", task, outcome: "failure" });
        apply({ kind: "task.ended", task, status: "failed" });
        apply({ kind: "human.circuit_reset", by: s("by"), reason: s("why") });
      }
      for (const [what, map, cap] of [
        ["resources", state.resources, CAPS.resources],
        ["reads", state.reads, CAPS.reads],
        ["files", state.files, CAPS.files],
        ["failure classes", state.failureClasses, CAPS.failureClasses],
        ["checks", state.checks, CAPS.checks],
        ["churn", state.churn, CAPS.churn],
        ["tasks", state.budget.tasks, CAPS.tasks],
      ] as const) {
        expect(Object.keys(map), what).toHaveLength(cap);
      }
      expect(jsonBytes(state)).toBeLessThan(STATE_BOUND_BYTES);
    });
  });
});
