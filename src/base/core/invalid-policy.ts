/** The error of a policy or settings that failed their schema, naming each bad field and the value given. */
import type * as z from "zod";
import { ReinsError } from "./errors.js";

/**
 * The ReinsError("invalid_policy") of a user's policy or settings that failed their schema (parsed with
 * `reportInput`): one message naming each bad field and the value given, e.g. `invalid policy:
 * budget.warnAt: got 2; Too big: expected number to be <=1`.
 */
export function invalidPolicy(source: string, error: z.ZodError): ReinsError {
  const problems = error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    const got = "input" in issue ? `got ${describeValue(issue.input)}; ` : "";
    return `${field}: ${got}${issue.message}`;
  });
  return new ReinsError("invalid_policy", `invalid ${source}: ${problems.join("; ")}`);
}

/** Describes a rejected value in a few words: `"abc"`, `-1`, `nothing`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
