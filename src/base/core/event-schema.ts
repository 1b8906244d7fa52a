/** The zod schema of events from outside (a trace, a hook, the HTTP API), and parseEvent to check one. */
import * as z from "zod";
import { ReinsError } from "./errors.js";
import type { ReinsEvent } from "./reins-event.js";
import { oneLineText } from "./one-line.js";

const text = z.string().max(1_000_000);
const time = z.number().finite().nonnegative();
const tokens = z.number().finite().nonnegative().optional();

/** A scope: text a person reads and a key of the stores, so one line without control characters. */
export const scopeText = oneLineText(1024);

const base = {
  at: time,
  scope: scopeText,
  task: text.optional(),
  id: z.string().max(256).optional(),
};
const human = { ...base, by: z.string().min(1).max(256), reason: text.optional() };
const touch = {
  tool: z.string().min(1).max(1024),
  inputHash: z.string().max(1024),
  shapeHash: z.string().max(1024).optional(),
  reads: z.array(text).max(10_000).optional(),
  writes: z.array(text).max(10_000).optional(),
  removes: z.array(text).max(10_000).optional(),
  command: text.optional(),
  linesChanged: z.number().finite().nonnegative().optional(),
  callId: z.string().max(1024).optional(),
};
const resource = z.enum(["tokens", "usd", "premiumRequests", "wallTimeMs", "toolCalls"]);

/** Validates any event that comes from outside (a trace, a hook, the HTTP API). */
export const eventSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("session.started"), ...base, agent: text.optional(), model: text.optional() }),
  z.object({ kind: z.literal("session.ended"), ...base, reason: text.optional() }),
  z.object({
    kind: z.literal("task.started"),
    ...base,
    task: z.string().min(1).max(1024),
    taskType: text.optional(),
    commit: z.string().max(256).optional(),
  }),
  z.object({
    kind: z.literal("task.ended"),
    ...base,
    task: z.string().min(1).max(1024),
    status: z.enum(["done", "failed", "canceled"]),
  }),
  z.object({ kind: z.literal("tool.requested"), ...base, ...touch, pools: z.literal(false).optional() }),
  z.object({
    kind: z.literal("tool.completed"),
    ...base,
    ...touch,
    outcome: z.enum(["success", "failure", "timeout"]),
    exitCode: z.number().int().optional(),
    outputHash: z.string().max(1024).optional(),
    errorHash: z.string().max(1024).optional(),
    durationMs: z.number().finite().nonnegative().optional(),
  }),
  z.object({
    kind: z.literal("usage.recorded"),
    ...base,
    inputTokens: tokens,
    outputTokens: tokens,
    cacheReadTokens: tokens,
    cacheWriteTokens: tokens,
    costUsd: tokens,
    premiumRequests: tokens,
    model: text.optional(),
    pricing: z.string().max(300).optional(),
    pools: z.literal(false).optional(),
  }),
  z.object({
    kind: z.literal("verification.ran"),
    ...base,
    name: z.string().min(1).max(1024),
    tier: z.enum(["fast", "medium", "slow"]).optional(),
    passed: z.boolean(),
    score: z.number().min(0).max(1).optional(),
    flagged: z.array(text).max(10_000).optional(),
    command: text.optional(),
    fingerprint: z.string().max(1024).optional(),
    failing: z.number().int().nonnegative().optional(),
  }),
  z.object({
    kind: z.literal("iteration.ended"),
    ...base,
    outcome: z.enum(["success", "failure"]).optional(),
  }),
  z.object({
    kind: z.literal("completion.claimed"),
    ...base,
    level: z.enum(["session", "task", "component", "module"]),
    promiseMet: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal("human.budget_extended"),
    ...human,
    resource,
    amount: z.number().finite().positive(),
    meter: z.enum(["session", "task"]).optional(),
  }),
  z.object({ kind: z.literal("human.budget_reset"), ...human }),
  z.object({ kind: z.literal("human.circuit_acknowledged"), ...human }),
  z.object({ kind: z.literal("human.circuit_reset"), ...human }),
  z.object({ kind: z.literal("human.alert_acknowledged"), ...human, alertId: z.string().min(1).max(256) }),
  z.object({ kind: z.literal("human.confirmed"), ...human }),
  z.object({
    kind: z.literal("human.spec_approved"),
    ...human,
    spec: z.string().min(1).max(4096),
    hash: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  z.object({
    kind: z.literal("human.task_approved"),
    ...human,
    run: z.string().min(1).max(256),
    task: z.string().min(1).max(1024),
    commit: z.string().regex(/^[0-9a-f]{7,64}$/),
  }),
  z.object({
    kind: z.literal("guard.tampered"),
    ...base,
    what: z.enum(["hooks", "store", "calls"]),
    detail: z.string().max(4096),
  }),
]);

/** Checks that `input` is an event; throws a one-line ReinsError naming the first bad field otherwise. */
export function parseEvent(input: unknown): ReinsEvent {
  const parsed = eventSchema.safeParse(input);
  if (parsed.success) return parsed.data as ReinsEvent;
  const issue = parsed.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? "event" : issue.path.join(".");
  throw new ReinsError("invalid_event", `invalid event: ${field}: ${issue?.message ?? "not an event"}`);
}
