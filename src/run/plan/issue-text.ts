/** How plan errors name things: paths into parsed data, values in a few characters, likely typos. */
import type * as z from "zod";

/** A segment of a path into parsed data: a map key or a list index. */
export type PathSegment = string | number;

/** A key or value cut to a length a message can show. */
export function shorten(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** A path as a person reads it: `modules[0].components[1].deps[0]`, `checks["odd name"].tier`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$-]{0,59}$/.test(segment))
      text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(shorten(String(segment)))}]`;
  }
  return text || "(top level)";
}

/** A value in a few characters: `"abc"`, `3`, `a list`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
}

const EXPECTED: Record<string, string> = {
  string: "a text",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "a list",
  object: "a map",
};

/** Where each container key of the hierarchy belongs, for a key written at the wrong level. */
const HIERARCHY_KEYS = new Set(["modules", "components", "tasks", "subtasks"]);
const HIERARCHY_HINT = "a module holds components, a component tasks, a task subtasks";

/** The closest known field name to a misspelt one, when it is close enough to be a typo. */
function suggestion(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  // A short key is close to many others: one edit at most, else two.
  let bestDistance = key.length <= 4 ? 2 : 3;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length] ?? 3;
}

/** One problem zod found, as the path it is at (with the key for an unknown one) and a short sentence. */
export interface IssueText {
  path: PathSegment[];
  /** The line to show is the key's own (an unknown or bad key), not its value's. */
  atKey: boolean;
  message: string;
  /** A missing field, or a field the format does not have: a key in the wrong place is often both. */
  kind?: "required" | "unknown";
}

/**
 * The problem to report of several: the first in the file; but when that is a missing field of an object
 * that also has an unknown one, the unknown one (`tasks` written where `components` belongs explains both).
 */
export function firstIssue<T extends IssueText & { line: number }>(problems: readonly T[]): T {
  const first = problems.reduce((best, problem) => (problem.line < best.line ? problem : best));
  if (first.kind !== "required") return first;
  const owner = JSON.stringify(first.path.slice(0, -1));
  return problems.find((p) => p.kind === "unknown" && JSON.stringify(p.path.slice(0, -1)) === owner) ?? first;
}

/**
 * Every problem to report, the one firstIssue picks first: a missing field of an object that also has an
 * unknown one is left out, as the unknown one explains it.
 */
export function allIssues<T extends IssueText & { line: number }>(problems: readonly T[]): T[] {
  const first = firstIssue(problems);
  const owner = (p: T) => JSON.stringify(p.path.slice(0, -1));
  const explained = (p: T) =>
    p.kind === "required" && problems.some((q) => q.kind === "unknown" && owner(q) === owner(p));
  return [first, ...problems.filter((p) => p !== first && !explained(p))];
}

/**
 * Says what is wrong with a field in words, without zod's jargon: `required`, `expected a text, got 3`,
 * `unknown field "dep" (did you mean "deps"?)`. `known` lists the field names of the format, for hints.
 */
export function issueText(issue: z.core.$ZodIssue, known: readonly string[]): IssueText {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== "symbol");
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) return { path, atKey: false, message: "required", kind: "required" };
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      return { path, atKey: false, message: `expected ${expected}, got ${describeValue(input)}` };
    }
    case "unrecognized_keys": {
      const key = issue.keys[0] ?? "";
      let hint = "";
      if (HIERARCHY_KEYS.has(key)) hint = ` here (${HIERARCHY_HINT})`;
      else if (known.includes(key)) hint = " here";
      else {
        const near = suggestion(key, known);
        if (near) hint = ` (did you mean "${near}"?)`;
      }
      return {
        path: [...path, key],
        atKey: true,
        message: `unknown field ${JSON.stringify(shorten(key))}${hint}`,
        kind: "unknown",
      };
    }
    case "invalid_key": {
      const inner = issue.issues[0]?.message ?? issue.message;
      return { path, atKey: true, message: `bad name ${describeValue(path.at(-1))}: ${inner}` };
    }
    case "invalid_value": {
      if (input === undefined) return { path, atKey: false, message: "required", kind: "required" };
      const allowed = issue.values.map((value) => JSON.stringify(value));
      const expected = allowed.length === 1 ? allowed[0] : `one of ${allowed.join(", ")}`;
      return { path, atKey: false, message: `got ${describeValue(input)}; expected ${expected}` };
    }
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      if (issue.origin === "array")
        return {
          path,
          atKey: false,
          message: issue.code === "too_small" ? "must not be empty" : `must list at most ${bound} entries`,
        };
      if (issue.origin === "string")
        return {
          path,
          atKey: false,
          message: issue.code === "too_small" ? "must not be empty" : `must be at most ${bound} characters`,
        };
      const word = issue.code === "too_small" ? (issue.inclusive ? "at least" : "more than") : "at most";
      return { path, atKey: false, message: `got ${describeValue(input)}; must be ${word} ${bound}` };
    }
    default:
      return {
        path,
        atKey: false,
        message: input === undefined ? issue.message : `got ${describeValue(input)}; ${issue.message}`,
      };
  }
}
