/** Plan files parsed from YAML or JSON, with the way back from a field path to its line. */
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { ReinsError } from "../../base/core/errors.js";
import { formatPath, shorten, type PathSegment } from "./issue-text.js";

/** Plans larger than this are refused before parsing: a real plan is a few hundred kilobytes at most. */
export const MAX_PLAN_BYTES = 4 * 1024 * 1024;

/**
 * Aliases expanded while reading a plan. A plan has little reason to alias at all; a small cap makes a
 * billion-laughs file fail at once instead of filling memory.
 */
const MAX_ALIAS_COUNT = 64;

export type { PathSegment } from "./issue-text.js";

/** Parsed YAML or JSON with a way back from a path to the line it came from. */
export interface SourceData {
  /** Plain data: objects, arrays, strings, numbers, booleans, null. */
  value: unknown;
  /**
   * The 1-based line of the value at `path`, or of its deepest ancestor present in the file (for a missing
   * field, the object that lacks it). With `key`, the line of the map key that the path ends with.
   */
  lineOf(path: readonly PathSegment[], key?: boolean): number;
}

/** Raises the one-line plan error `file:line: message`. */
export function planError(file: string, line: number, message: string): ReinsError {
  return new ReinsError("invalid_plan", `${file}:${line}: ${message}`);
}

/** One problem of a plan, at its place. */
export interface PlanProblem {
  file: string;
  line: number;
  message: string;
}

/**
 * Every problem of a plan in one error, so a person fixes them in one pass, and still one line: the first
 * problem as planError says it, then the others in the order of the file, `; line N: …` each (`; file:N: …`
 * for another file).
 */
export function planProblems(problems: readonly PlanProblem[]): ReinsError {
  const [first, ...rest] = problems;
  if (first === undefined) return new ReinsError("invalid_plan", "the plan has a problem");
  const seen = new Set([`${first.file}:${first.line}: ${first.message}`]);
  const others: string[] = [];
  for (const p of [...rest].sort((a, b) => a.line - b.line)) {
    const key = `${p.file}:${p.line}: ${p.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    others.push(`${p.file === first.file ? `line ${p.line}` : `${p.file}:${p.line}`}: ${p.message}`);
  }
  return planError(first.file, first.line, [first.message, ...others].join("; "));
}

/** Throws when a plan's text is larger than any plan should be. */
export function assertPlanSize(file: string, bytes: number): void {
  if (bytes > MAX_PLAN_BYTES)
    throw new ReinsError(
      "invalid_plan",
      `${file}: ${(bytes / 1024 / 1024).toFixed(1)} MB is too large for a plan (at most ${MAX_PLAN_BYTES / 1024 / 1024} MB)`,
    );
}

/** The first line of a yaml error message, without the position it repeats (we print our own). */
function yamlMessage(message: string): string {
  const first = message.split("\n")[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, "");
}

/**
 * Parses YAML (JSON is read the same way, being YAML 1.2) into plain data, keeping the document to find
 * lines. Syntax errors, duplicate keys, several documents, alias bombs and nesting too deep for the stack
 * all become one-line ReinsErrors naming the line.
 */
export function readSource(text: string, file: string): SourceData {
  assertPlanSize(file, Buffer.byteLength(text, "utf8"));
  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    // Duplicate keys are found below: yaml's own check compares each key with every other (quadratic).
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  } catch (error) {
    throw tooDeep(file, error);
  }
  const lineAt = (offset: number) => lines.linePos(offset).line;
  // Warnings are tags the schema does not know (`!!js/function`): a plan has no use for any tag.
  const error = doc.errors[0] ?? doc.warnings[0];
  if (error) {
    const line = lineAt(error.pos[0]);
    if (/call stack/i.test(error.message)) throw planError(file, line, "nesting too deep");
    throw planError(
      file,
      line,
      `invalid ${/\.json$/i.test(file) ? "JSON" : "YAML"}: ${yamlMessage(error.message)}`,
    );
  }
  const duplicate = findDuplicateKey(doc.contents);
  if (duplicate)
    throw planError(
      file,
      lineAt(duplicate.offset),
      `invalid ${/\.json$/i.test(file) ? "JSON" : "YAML"}: duplicate key ${JSON.stringify(shorten(duplicate.key))}`,
    );
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof ReferenceError)
      throw planError(file, 1, `too many aliases (at most ${MAX_ALIAS_COUNT} expansions): ${error.message}`);
    throw tooDeep(file, error);
  }
  /** The line a node starts on, when it has a place in the text. */
  const lineOfNode = (node: unknown): number | null => {
    const range = isNode(node) ? node.range : undefined;
    return range ? lineAt(range[0]) : null;
  };
  function lineOf(path: readonly PathSegment[], key = false): number {
    let node: unknown = doc.contents;
    let line = lineOfNode(node) ?? 1;
    for (const [index, segment] of path.entries()) {
      if (isAlias(node)) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = node.items.find(
          (item) => isScalar(item.key) && String(item.key.value) === String(segment),
        );
        if (!pair) break;
        const keyLine = lineOfNode(pair.key) ?? line;
        if (key && index === path.length - 1) return keyLine;
        node = pair.value;
        line = lineOfNode(node) ?? keyLine;
      } else if (isSeq(node) && typeof segment === "number" && node.items[segment] !== undefined) {
        node = node.items[segment];
        line = lineOfNode(node) ?? line;
      } else break;
    }
    return line;
  }
  const hostile = findKey(value, "__proto__");
  if (hostile) {
    // Found before any schema: a record would silently skip the key, where it must be refused.
    throw planError(
      file,
      lineOf(hostile, true),
      `${formatPath(hostile)}: the key "__proto__" is not allowed`,
    );
  }
  return { value, lineOf };
}

/** A stack overflow while reading means nesting far deeper than any plan: say so, rethrow anything else. */
function tooDeep(file: string, error: unknown): unknown {
  if (error instanceof RangeError) return planError(file, 1, "nesting too deep");
  return error;
}

/** The path of the first map key named `name` in plain data, depth first, or null. */
function findKey(value: unknown, name: string): PathSegment[] | null {
  const stack: { value: unknown; path: PathSegment[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: item, path } = stack.pop()!;
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--)
        stack.push({ value: item[i] as unknown, path: [...path, i] });
    } else if (typeof item === "object" && item !== null) {
      const keys = Object.keys(item);
      if (keys.includes(name)) return [...path, name];
      for (const key of keys.reverse())
        stack.push({ value: (item as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return null;
}

/** The first key repeated in a map of the document, depth first, with where it is written. */
function findDuplicateKey(root: unknown): { key: string; offset: number } | null {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          const key = String(pair.key.value);
          if (seen.has(key)) return { key, offset: pair.key.range?.[0] ?? 0 };
          seen.add(key);
        }
      }
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]?.value);
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    }
  }
  return null;
}
