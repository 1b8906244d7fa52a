/** A scope's circuit breaker: a type per status (closed, open, half-open) and every move between them. */
import { clip } from "./capped.js";
import type { Policy } from "./policy.js";
import type { Shared } from "./own.js";

/** Why the circuit opened. */
export type TripReason =
  | "duplicate_calls"
  | "repeated_error"
  | "ignored_denials"
  | "failed_verifications"
  | "probe_failed"
  /** No longer trips the breaker (a rule of thumb: denied or advised); kept for snapshots written before. */
  | "rapid_fire"
  | "max_calls_per_task";

/*
 * Every status keeps the same seven fields, those it does not use null (or probe "none"): the stored JSON
 * is the flat record every version of reins has written, so old snapshots load as they are, and the union
 * only says which values go together.
 */

/** Calls flow. */
export interface ClosedBreaker {
  status: "closed";
  reason: null;
  detail: null;
  /** When it last opened, or null if it never has. */
  openedAt: number | null;
  probe: "none";
  probeAt: null;
  /** Times it has opened in this scope, in any status. */
  trips: number;
}

/** Tripped on evidence that the agent is stuck: calls are blocked until a person acknowledges (or a timeout). */
export interface OpenBreaker {
  status: "open";
  reason: TripReason;
  /** What tripped it, in words (it may quote the agent, so it is clipped). */
  detail: string;
  openedAt: number;
  probe: "none";
  probeAt: null;
  trips: number;
}

interface HalfOpenFields {
  status: "half_open";
  /** Why it opened last, kept until it closes. */
  reason: TripReason;
  detail: string;
  openedAt: number;
  trips: number;
}

/**
 * Acknowledged (or timed out) after opening: one probe call may go through. `probe` says whether it is not
 * yet sent, out (since `probeAt`), or came back good (at `probeAt`).
 */
export type HalfOpenBreaker = HalfOpenFields &
  ({ probe: "none"; probeAt: null } | { probe: "in_flight" | "passed"; probeAt: number });

/** A circuit breaker: plain JSON, told apart by `status`. */
export type Breaker = ClosedBreaker | OpenBreaker | HalfOpenBreaker;

export type BreakerStatus = Breaker["status"];

/** The breaker of a scope that has never tripped. */
export function closedBreaker(): ClosedBreaker {
  return {
    status: "closed",
    reason: null,
    detail: null,
    openedAt: null,
    probe: "none",
    probeAt: null,
    trips: 0,
  };
}

/** Any status → open at `at`, for `reason`: one trip more. */
export function tripBreaker(
  breaker: Shared<Breaker>,
  reason: TripReason,
  detail: string,
  at: number,
): OpenBreaker {
  return {
    status: "open",
    reason,
    detail: clip(detail), // it may quote the agent's text: a huge tool name must not grow the state
    openedAt: at,
    probe: "none",
    probeAt: null,
    trips: breaker.trips + 1,
  };
}

/** Open → half-open with no probe sent yet; any other status stays as it is. */
export function halfOpenBreaker(breaker: Shared<Breaker>): Breaker {
  if (breaker.status !== "open") return breaker;
  const { reason, detail, openedAt, trips } = breaker;
  return { status: "half_open", reason, detail, openedAt, probe: "none", probeAt: null, trips };
}

/** Any status → closed, keeping when it last opened and how often it tripped. */
export function resetBreaker(breaker: Shared<Breaker>): ClosedBreaker {
  const { openedAt, trips } = breaker;
  return { status: "closed", reason: null, detail: null, openedAt, probe: "none", probeAt: null, trips };
}

/**
 * The moves time makes: open → half-open once `autoHalfOpenMs` has passed since it opened (never when
 * null), half-open → closed once `cooldownMs` has passed since its probe came back good.
 */
export function settleBreaker(
  breaker: Shared<Breaker>,
  at: number,
  timing: Pick<Policy["circuit"], "autoHalfOpenMs" | "cooldownMs">,
): Breaker {
  switch (breaker.status) {
    case "open": {
      const auto = timing.autoHalfOpenMs;
      return auto !== null && at - breaker.openedAt >= auto ? halfOpenBreaker(breaker) : breaker;
    }
    case "half_open":
      return breaker.probe === "passed" && at - breaker.probeAt >= timing.cooldownMs
        ? resetBreaker(breaker)
        : breaker;
    case "closed":
      return breaker;
  }
}

/** Half-open: the probe call goes out at `at`. Any other status has no probe to send. */
export function sendProbe(breaker: Shared<Breaker>, at: number): Breaker {
  if (breaker.status !== "half_open") return breaker;
  return { ...breaker, probe: "in_flight", probeAt: at };
}

/** Half-open with the probe out: it came back good at `at`. Otherwise nothing changes. */
export function passProbe(breaker: Shared<Breaker>, at: number): Breaker {
  if (breaker.status !== "half_open" || breaker.probe !== "in_flight") return breaker;
  return { ...breaker, probe: "passed", probeAt: at };
}
