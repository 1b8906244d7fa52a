import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * No source function runs over 120 lines: a function that long holds several jobs and is split
 * into named parts. Counted from the compiler's syntax tree: function declarations and
 * expressions, arrow functions, methods, accessors and constructors, each from its first line to
 * its last (a nested function counts inside its parent too).
 */

const root = join(import.meta.dirname, "..", "..");
const MAX_LINES = 120;

interface LongFunction {
  readonly key: string;
  readonly lines: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !entry.name.endsWith(".d.ts")
      ? [path]
      : [];
  });
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) {
    const callee = parent.expression;
    return `(callback of ${ts.isPropertyAccessExpression(callee) ? callee.name.text : callee.getText(source)})`;
  }
  return "(anonymous)";
}

/** Every function-like node of `path` longer than `MAX_LINES` lines. */
function longFunctions(path: string): LongFunction[] {
  const text = readFileSync(path, "utf8");
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_LINES) {
        found.push({ key: `${relative(root, path)}:${nameOf(node, source)}`, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("source functions", () => {
  it(`run no longer than ${MAX_LINES} lines, with no exceptions`, () => {
    const long = sourceFiles(join(root, "src")).flatMap(longFunctions);
    expect(long.map((f) => `${f.key} (${f.lines} lines)`)).toEqual([]);
  });

  it("are counted: a function written over the limit is found", () => {
    const body = Array.from({ length: MAX_LINES }, (_x, i) => `  const v${i} = ${i};`).join("\n");
    const file = join(mkdtempSync(join(tmpdir(), "reins-fn-length-")), "long.ts");
    writeFileSync(file, `export function tooLong() {\n${body}\n}\nexport const short = () => 1;\n`);
    expect(longFunctions(file).map((f) => [f.key.split(":").pop(), f.lines])).toEqual([
      ["tooLong", MAX_LINES + 2],
    ]);
  });
});
