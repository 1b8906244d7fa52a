/**
 * Fills one pool from many writers, as a fleet does, for the bounded-memory tests of the Redis store (one
 * server and Cluster): each writer is a session of its own, all charging the pool `team`.
 */
import { expect } from "vitest";
import { resolvePolicy, type ReinsEvent } from "../../src/base/core/index.js";
import { SNAPSHOT_EVERY } from "../../src/base/core/snapshot.js";
import type { RedisStore } from "../../src/base/store/redis.js";

/** Tokens of every usage event. */
export const FILL_TOKENS = 7;
/** The pool's keys, by kind, under a store's prefix. */
export const POOL_KEYS = ["snap", "log", "ids", "alerts", "ids0"] as const;

/** What a fill measured. */
export interface Filled {
  /** The pool's memory (MEMORY USAGE of its keys, summed) after each of `checkpoints` events. */
  bytes: Map<number, number>;
  /** Events sent, per writer, and per append. */
  perWriter: number;
  writers: number;
  batch: number;
  /** A usage event of writer `w`, number `i`: the same one every time it is asked for. */
  event(w: number, i: number): ReinsEvent;
}

export interface FillOptions {
  /** Opens one writer's store (each its own connection, as each process of a fleet has). */
  open(): Promise<RedisStore>;
  /** MEMORY USAGE of one key, in bytes (0 when it does not exist). */
  memory(key: string): Promise<number>;
  /** The key prefix the stores write under. */
  prefix: string;
  /** @default 8 */
  writers?: number;
  /** @default 100,000 */
  events?: number;
  /** Events per append. @default 25 */
  batch?: number;
  /** Totals after which the pool's memory is measured. @default 1,000, 10,000 and 100,000 */
  checkpoints?: readonly number[];
  /** Called after each round (one batch from every writer): to move a test's clock on. */
  onRound?(): void;
}

/** The policy of the fill: a pool too large to run out. */
export const fillPolicy = resolvePolicy({ pools: { team: { tokens: 1_000_000_000_000 } } });

/** Sends `events` usage events from `writers` writers, in batches, and measures the pool on the way. */
export async function fillPool(options: FillOptions): Promise<Filled> {
  const { writers = 8, batch = 25, checkpoints = [1_000, 10_000, 100_000] } = options;
  const perWriter = (options.events ?? 100_000) / writers;
  const stores = await Promise.all(Array.from({ length: writers }, () => options.open()));
  const event = (w: number, i: number): ReinsEvent => ({
    kind: "usage.recorded",
    at: 1_000_000 + i,
    scope: `session:fill-${w}`,
    id: `w${w}-${i}`,
    inputTokens: FILL_TOKENS,
  });
  const bytes = new Map<number, number>();
  const measure = async () => {
    let sum = 0;
    for (const kind of POOL_KEYS) sum += await options.memory(`${options.prefix}{pool:team}:${kind}`);
    return sum;
  };
  // Rounds of one batch per writer, all at once: the writers contend for the pool on every round.
  const rounds = perWriter / batch;
  let sent = 0;
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      stores.map((store, w) => {
        const events = Array.from({ length: batch }, (_, j) => event(w, round * batch + j));
        return store.append(`session:fill-${w}`, events, fillPolicy);
      }),
    );
    sent += writers * batch;
    options.onRound?.();
    if (checkpoints.includes(sent)) bytes.set(sent, await measure());
  }
  await Promise.all(stores.map((s) => s.close()));
  return { bytes, perWriter, writers, batch, event };
}

/**
 * The bound on one pool's memory in Redis, whatever the events it was charged with: its snapshot (a pool's
 * state is a few KB), at most two SNAPSHOT_EVERY periods of records and a batch (~500 bytes each), and the
 * ids of two windows (in the tests 2 x 5 rounds of 8 x 25 charges, ~100 bytes each): about 320 KB, and
 * 512 KiB leaves room for Redis's own overhead.
 */
export const POOL_BOUND_BYTES = 512 * 1024;

/**
 * What a fill of 100,000 events must leave: the pool's memory under POOL_BOUND_BYTES and flat from 10,000
 * events on, every token counted once in the pool and each session, redeliveries within the window
 * answered null and counted once, and `usage()` (what `reins status` says) within the bound.
 */
export async function expectFilledExactly(store: RedisStore, filled: Filled): Promise<void> {
  const { writers, batch } = filled;
  const bytes = [...filled.bytes.values()];
  expect(Math.max(...bytes)).toBeLessThanOrEqual(POOL_BOUND_BYTES);
  // Flat: what 90,000 more events add is noise, not growth.
  expect(filled.bytes.get(100_000)!).toBeLessThanOrEqual(filled.bytes.get(10_000)! * 1.25);
  const total = writers * filled.perWriter;
  expect((await store.state("pool:team"))?.budget.session.spent.tokens).toBe(total * FILL_TOKENS);
  for (let w = 0; w < writers; w++) {
    expect((await store.state(`session:fill-${w}`))?.budget.session.spent.tokens).toBe(
      filled.perWriter * FILL_TOKENS,
    );
    // Redelivered within the window (the last rounds): known to the session and to the pool, counted once.
    const again = Array.from({ length: 75 }, (_, j) => filled.event(w, filled.perWriter - 1 - j));
    const { answers } = await store.append(`session:fill-${w}`, again, fillPolicy);
    expect(answers.every((a) => a === null)).toBe(true);
  }
  expect((await store.state("pool:team"))?.budget.session.spent.tokens).toBe(total * FILL_TOKENS);
  // What `reins status` says of the store: its scopes (the sessions and the pool), their records and bytes.
  const usage = await store.usage();
  expect(usage.scopes).toBe(writers + 1);
  expect(usage.records).toBeLessThanOrEqual((writers + 1) * (2 * SNAPSHOT_EVERY + batch));
  expect(usage.bytes).toBeGreaterThan(filled.bytes.get(100_000)!);
  expect(usage.bytes).toBeLessThan((writers + 1) * POOL_BOUND_BYTES);
}
