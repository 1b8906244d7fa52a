/**
 * A config's problems: each one dropped from the policy (the defaults stand in for it) and said in one line
 * with its file, line and column, so a typo in reins.config.json never switches guarding off.
 */
import { closest, distance } from "fastest-levenshtein";
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import type * as z from "zod";
import { describeValue } from "../core/invalid-policy.js";
import { policySchema, type Policy } from "../core/policy.js";
import { policyKeysAt } from "../core/policy-keys.js";

/** At most this many problems are said one by one; a line counts the rest. */
export const MAX_PROBLEMS_SAID = 8;

/** What follows every problem: guarding goes on, with the defaults where the config was wrong. */
const GUARDING = "reins is guarding with the defaults for it";

/** A `REINS_*` variable that sets one leaf of the policy. */
export interface Override {
  name: string;
  path: string[];
  value: unknown;
}

/** A problem found: where (`reins.config.json:3:5`, `env REINS_X`), what is wrong, and what reins does. */
interface Problem {
  at: () => string;
  what: () => string;
  then: string;
}

/** The words for jsonc-parser's error codes. */
const SYNTAX: Record<string, string> = {
  InvalidSymbol: "an unexpected character",
  InvalidNumberFormat: "a badly written number",
  PropertyNameExpected: "a key in double quotes expected (a trailing comma?)",
  ValueExpected: "a value expected",
  ColonExpected: "a colon expected",
  CommaExpected: "a comma expected",
  CloseBraceExpected: "a closing } expected",
  CloseBracketExpected: "a closing ] expected",
  EndOfFileExpected: "the end of the file expected",
  InvalidCommentToken: "a comment, which JSON does not allow",
  UnexpectedEndOfComment: "a comment that never ends",
  UnexpectedEndOfString: "a string that never ends",
  UnexpectedEndOfNumber: "a number that never ends",
  InvalidUnicode: "a bad \\u escape",
  InvalidEscapeCharacter: "a bad escape character",
  InvalidCharacter: "a character a string may not hold",
};

/** `line:column` (both from 1) of `offset` in `text`. */
function lineColumn(text: string, offset: number): string {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line += 1;
    start = i + 1;
  }
  return `${line}:${offset - start + 1}`;
}

/** A key or value as a message shows it: quoted, and cut short when long. */
function quote(key: string): string {
  return describeValue(key.length > 60 ? `${key.slice(0, 57)}...` : key);
}

/** Finds where a path of the policy file is written, parsing the file only once a problem needs it. */
class Locator {
  private tree: Node | undefined | null = null;

  constructor(
    private readonly label: string,
    private readonly text: string | null,
  ) {}

  /** `file:line:column` of the key (or, with `value`, of the value) at `path`; `file` when not found. */
  at(path: readonly (string | number)[], part: "key" | "value" = "key"): string {
    if (this.text === null) return this.label;
    if (this.tree === null) {
      try {
        this.tree = parseTree(this.text, [], { disallowComments: true, allowTrailingComma: false });
      } catch {
        this.tree = undefined;
      }
    }
    if (this.tree === undefined) return this.label;
    let node = findNodeAtLocation(this.tree, [...path]);
    for (let up = path.length; node === undefined && up > 0; up--)
      node = findNodeAtLocation(this.tree, path.slice(0, up - 1));
    if (node === undefined) return this.label;
    const key = node.parent?.type === "property" && part === "key" ? node.parent.children?.[0] : undefined;
    return `${this.label}:${lineColumn(this.text, (key ?? node).offset)}`;
  }
}

/**
 * The parsed content of a policy file, or the one line saying why it cannot be used at all (not JSON, not
 * an object), with the line and column of the first syntax error.
 */
export function parsePolicyDocument(
  label: string,
  text: string,
): { data: Record<string, unknown> } | { problem: string } {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (error) {
    const errors: ParseError[] = [];
    try {
      parseTree(body, errors, { disallowComments: true, allowTrailingComma: false });
    } catch {
      // too deep to walk: said without a position
    }
    const first = errors[0];
    if (first === undefined)
      return { problem: `${label}: not valid JSON (${(error as Error).message.split("\n")[0] ?? ""})` };
    const why = SYNTAX[printParseErrorCode(first.error)] ?? "a syntax error";
    return { problem: `${label}:${lineColumn(body, first.offset)}: not valid JSON: ${why}` };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    const kind = data === null ? "null" : Array.isArray(data) ? "a list" : `a ${typeof data}`;
    return {
      problem: `${label}:${lineColumn(body, body.search(/\S|$/))}: must hold a JSON object, not ${kind}`,
    };
  }
  return { data: data as Record<string, unknown> };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The value at `path` of `root`, reading own keys only (a key `__proto__` is a key, never the prototype). */
export function getAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** Removes the value at `path` of `root` (own keys only); whether there was one. */
function removeAt(root: Record<string, unknown>, path: readonly string[]): boolean {
  const parent = getAt(root, path.slice(0, -1));
  const last = path[path.length - 1];
  if (last === undefined || !isPlainObject(parent) || !Object.hasOwn(parent, last)) return false;
  return delete parent[last];
}

/** Sets `value` at `path` of `target`, making the objects on the way (own keys only). */
export function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (!isPlainObject(next))
      Object.defineProperty(node, key, { value: {}, enumerable: true, writable: true, configurable: true });
    node = node[key] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (last !== undefined)
    Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy of a parsed JSON value, through JSON (keys such as `__proto__` stay own keys). */
function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** What one zod issue asks to drop: the path to remove, where to point, and what to say. */
interface Target {
  remove: string[];
  point: (string | number)[];
  part: "key" | "value";
  what: () => string;
}

const field = (path: readonly (string | number)[]) => (path.length > 0 ? path.join(".") : "(top level)");

/** "got ...; " for an issue's value, never for the store's spec (it may carry a password). */
function got(issue: z.core.$ZodIssue, path: readonly (string | number)[]): string {
  if (!("input" in issue) || path[0] === "store") return "";
  return `got ${describeValue(issue.input)}; `;
}

/** An unknown key's line, with the nearest key the schema allows at that place when one is close. */
function unknownKey(at: readonly (string | number)[], key: string): string {
  const allowed = policyKeysAt(at);
  const near = allowed.length > 0 ? closest(key, allowed) : undefined;
  const hint =
    near !== undefined && distance(key, near) <= Math.max(1, Math.floor(key.length / 3))
      ? ` (did you mean ${quote(near)}?)`
      : "";
  return `unknown key ${quote(key)}${at.length > 0 ? ` in ${field(at)}` : ""}${hint}`;
}

/**
 * The targets of one issue. An unknown key drops that key; a bad element of a list drops the list (its
 * default stands, and no later path shifts); a section's rule (`warnAt <= askAt <= pauseAt`) drops that
 * section's own values, keeping its subsections; anything else drops the value it names.
 */
function targetsOf(issue: z.core.$ZodIssue, merged: Record<string, unknown>): Target[] {
  const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  if (issue.code === "unrecognized_keys")
    return issue.keys.map((key) => ({
      remove: [...path.map(String), key],
      point: [...path, key],
      part: "key",
      what: () => unknownKey(path, key),
    }));
  const list = path.findIndex((p) => typeof p === "number");
  const remove = (list === -1 ? path : path.slice(0, list)).map(String);
  if (issue.code === "invalid_key") {
    const inner = issue.issues[0]?.message ?? issue.message;
    const key = String(path[path.length - 1]);
    return [
      {
        remove,
        point: path,
        part: "key",
        what: () => `${field(path.slice(0, -1))}: key ${quote(key)}: ${inner}`,
      },
    ];
  }
  const section = getAt(merged, remove);
  if (issue.code === "custom" && list === -1 && isPlainObject(section)) {
    const own = Object.keys(section).filter((k) => !isPlainObject(section[k]));
    if (own.length > 0)
      return own.map((key) => {
        // Taken now: the value is dropped before the line is said.
        const value = section[key];
        return {
          remove: [...remove, key],
          point: [...remove, key],
          part: "value",
          what: () =>
            `${field([...remove, key])}: got ${describeValue(value)}; ${field(remove)} ${issue.message}`,
        };
      });
  }
  // Said now: the value is dropped (and may be emptied by another issue) before the line is said.
  const what = `${field(path)}: ${got(issue, path)}${issue.message}`;
  return [{ remove, point: path, part: "value", what: () => what }];
}

/** The policy made good: what was dropped, and the policy the rest gives. */
export interface Repaired {
  policy: Policy;
  /** The file's content with its problems removed. */
  input: Record<string, unknown>;
  /** The variables kept (a bad one is dropped). */
  overrides: Override[];
  /** One line per problem, at most MAX_PROBLEMS_SAID and one counting the rest. */
  problems: string[];
  /** Whether anything was dropped from the file (not only from the variables). */
  fromFile: boolean;
}

function merge(input: Record<string, unknown>, overrides: readonly Override[]): Record<string, unknown> {
  // Validating reads its input and never changes it: without variables the input itself will do.
  if (overrides.length === 0) return input;
  const merged = copy(input);
  for (const o of overrides) setAt(merged, o.path, o.value);
  return merged;
}

/**
 * The policy of a file's content (`input`, parsed from `text`, named `label`) and `REINS_*` overrides,
 * validated, with each invalid part dropped so its default stands: an unknown key, a value out of range, a
 * variable with a bad value (the file's value, else the default, stands for it). Never throws for a
 * config: with nothing left to drop, the defaults stand for all of it.
 */
export function repairPolicy(options: {
  label: string;
  text: string | null;
  input: Record<string, unknown>;
  overrides: readonly Override[];
}): Repaired {
  const { label } = options;
  const locate = new Locator(label, options.text);
  const input = copy(options.input);
  let overrides = [...options.overrides];
  const problems: Problem[] = [];
  let fromFile = false;
  for (let round = 0; round < 16; round++) {
    const merged = merge(input, overrides);
    const parsed = policySchema.safeParse(merged, { reportInput: true, jitless: true });
    if (parsed.success) return { policy: parsed.data, input, overrides, problems: said(problems), fromFile };
    let dropped = false;
    for (const issue of parsed.error.issues) {
      for (const target of targetsOf(issue, merged)) {
        const key = JSON.stringify(target.remove);
        const under =
          overrides.length === 0
            ? []
            : overrides.filter((o) => JSON.stringify(o.path.slice(0, target.remove.length)) === key);
        const exact = under.find((o) => o.path.length === target.remove.length);
        if (under.length > 0) overrides = overrides.filter((o) => !under.includes(o));
        for (const o of under) {
          const stands = o === exact && getAt(input, o.path) !== undefined;
          problems.push({
            at: () => `env ${o.name}`,
            what: target.what,
            then: stands ? `reins is guarding with the value in ${label} for it` : GUARDING,
          });
          dropped = true;
        }
        if (exact !== undefined) continue;
        const point = target.point;
        if (removeAt(input, target.remove)) {
          problems.push({ at: () => locate.at(point, target.part), what: target.what, then: GUARDING });
          dropped = true;
          fromFile = true;
        }
      }
    }
    if (!dropped) break;
  }
  // Nothing more to drop, and still invalid: a rule across sections; the defaults stand for all of it.
  problems.push({
    at: () => label,
    what: () => "the policy breaks a rule no single value can be dropped for",
    then: "reins is guarding with the defaults for all of it",
  });
  return {
    policy: policySchema.parse({}),
    input: {},
    overrides: [],
    problems: said(problems),
    fromFile: true,
  };
}

/** The lines of `problems`: the first MAX_PROBLEMS_SAID in full, then one counting the rest. */
function said(problems: readonly Problem[]): string[] {
  const lines = problems.slice(0, MAX_PROBLEMS_SAID).map((p) => `${p.at()}: ${p.what()}; ${p.then}`);
  const more = problems.length - MAX_PROBLEMS_SAID;
  if (more > 0) lines.push(`and ${more} more problem(s) like these; ${GUARDING.replace(" it", " each")}`);
  return lines;
}
