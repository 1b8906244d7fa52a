import fc from "fast-check";
import type { ReinsEvent } from "../../src/base/core/reins-event.js";

/**
 * Hostile event content for property tests: every string field drawn from values that break code which
 * trusts its input (prototype names as map keys, CR/LF and NUL, lone surrogates, a 10 MB string), numbers
 * at the limits.
 */

/** Names an object inherits, and other strings that break code which trusts its input. */
export const HOSTILE: readonly string[] = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "__defineGetter__",
  "__lookupSetter__",
  "line\r\nevent: record\r\ndata: {}",
  "nul\u0000byte",
  "\ud800",
  "a\udfffb",
  "",
  " ",
  "x".repeat(10 * 1024 * 1024),
];

const str = fc.constantFrom(...HOSTILE);
const num = fc.constantFrom(0, 1, -1, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE, 1e300, -0);

const bodyArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ kind: fc.constant("session.started"), agent: str, model: str }),
  fc.record({ kind: fc.constant("task.started"), task: str, taskType: str }),
  fc.record({
    kind: fc.constant("task.ended"),
    task: str,
    status: fc.constantFrom("done", "failed", "canceled"),
  }),
  fc.record({
    kind: fc.constant("tool.requested"),
    task: str,
    tool: str,
    inputHash: str,
    shapeHash: str,
    command: str,
    reads: fc.array(str, { maxLength: 2 }),
    writes: fc.array(str, { maxLength: 2 }),
    linesChanged: num,
    callId: str,
  }),
  fc.record({
    kind: fc.constant("tool.completed"),
    task: str,
    tool: str,
    inputHash: str,
    command: str,
    outcome: fc.constantFrom("success", "failure", "timeout"),
    outputHash: str,
    errorHash: str,
    exitCode: fc.integer(),
  }),
  fc.record({
    kind: fc.constant("usage.recorded"),
    inputTokens: num,
    outputTokens: num,
    cacheReadTokens: num,
    costUsd: num,
    model: str,
  }),
  fc.record({
    kind: fc.constant("verification.ran"),
    task: str,
    name: str,
    passed: fc.boolean(),
    command: str,
    fingerprint: str,
    failing: num,
    flagged: fc.array(str, { maxLength: 2 }),
  }),
  fc.record({ kind: fc.constant("iteration.ended"), outcome: fc.constantFrom("success", "failure") }),
  fc.record({
    kind: fc.constant("completion.claimed"),
    task: str,
    level: fc.constantFrom("session", "task", "component", "module"),
  }),
  fc.record({
    kind: fc.constant("human.budget_extended"),
    by: str,
    reason: str,
    resource: fc.constantFrom("tokens", "usd"),
    amount: num,
  }),
  fc.record({ kind: fc.constant("human.confirmed"), by: str, reason: str }),
  fc.record({ kind: fc.constant("human.circuit_acknowledged"), by: str }),
);

/** Sequences of 1 to 40 such events of one scope, a second apart. */
export const hostileEvents = (scope: string): fc.Arbitrary<ReinsEvent[]> =>
  fc
    .array(bodyArb, { minLength: 1, maxLength: 40 })
    .map((bodies) =>
      bodies.map((b, i) => ({ ...b, at: 1_790_000_000_000 + i * 1000, scope }) as unknown as ReinsEvent),
    );
