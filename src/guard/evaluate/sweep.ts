/** A policy sweep: one field set to several values, for `reins evaluate --sweep`. */
import { ReinsError } from "../../base/core/errors.js";
import { resolvePolicy, type Policy } from "../../base/core/policy.js";

/**
 * A policy curve: the same policy with one field set to each of several values, so `reins evaluate --sweep`
 * can show how a threshold trades false stops against failed runs caught.
 */

/** Parses `field.path=v1,v2,...` (values read as JSON, else as text) into one validated policy per value. */
export function sweepPolicies(base: Policy, spec: string): { value: unknown; policy: Policy }[] {
  const at = spec.indexOf("=");
  const field = spec.slice(0, at).trim();
  if (at <= 0 || !/^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9_-]+)*$/.test(field) || spec.slice(at + 1).trim() === "")
    throw new ReinsError(
      "usage",
      `--sweep wants field=value,value... (e.g. circuit.duplicateThreshold=3,5,8), got "${spec}"`,
    );
  const path = field.split(".");
  return spec
    .slice(at + 1)
    .split(",")
    .map((raw) => {
      let value: unknown;
      try {
        value = JSON.parse(raw.trim());
      } catch {
        value = raw.trim();
      }
      const copy = structuredClone(base) as unknown as Record<string, unknown>;
      let node = copy;
      for (const key of path.slice(0, -1)) {
        const next = node[key];
        if (next === null || typeof next !== "object" || Array.isArray(next))
          throw new ReinsError("usage", `--sweep: ${field} is not a policy field`);
        node = next as Record<string, unknown>;
      }
      const last = path[path.length - 1] ?? "";
      if (!Object.hasOwn(node, last))
        throw new ReinsError("usage", `--sweep: ${field} is not a policy field`);
      node[last] = value;
      return { value, policy: resolvePolicy(copy, `policy with ${field}=${raw.trim()}`) };
    });
}
