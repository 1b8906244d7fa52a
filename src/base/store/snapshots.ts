/** What the stores keep with a snapshot: the policy its log tail is decided under, by fingerprint. */
import { createHash } from "node:crypto";
import { policyFor } from "../core/batch.js";
import type { Policy } from "../core/policy.js";

/** A policy as a store keeps it beside a snapshot: its JSON and a fingerprint of that JSON. */
export interface StoredPolicy {
  id: string;
  json: string;
}

const fingerprints = new WeakMap<Policy, StoredPolicy>();

/**
 * The stored form of the policy `scope` is decided under (a pool's own, or the project's). Computed once
 * per policy object: a daemon pays it once, not per decision.
 */
export function storedPolicy(scope: string, policy: Policy): StoredPolicy {
  const own = policyFor(scope, policy);
  let stored = fingerprints.get(own);
  if (stored === undefined) {
    const json = JSON.stringify(own);
    stored = { id: createHash("sha256").update(json).digest("hex").slice(0, 32), json };
    fingerprints.set(own, stored);
  }
  return stored;
}

/** The policy a scope's tail was decided under: the caller's when the fingerprints match, else the stored one. */
export function tailPolicy(
  scope: string,
  policy: Policy,
  storedId: string | null,
  storedJson: string | null,
): Policy {
  const own = policyFor(scope, policy);
  if (storedJson === null || storedId === storedPolicy(scope, policy).id) return own;
  return JSON.parse(storedJson) as Policy;
}
