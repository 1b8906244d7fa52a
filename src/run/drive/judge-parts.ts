/**
 * The part of a shared file that judges the work: package.json's scripts and test runners' fields,
 * pyproject.toml's and setup.cfg's test sections. Pure text work: what that part is, whether it changed,
 * and the file with its judge part as it was and the rest as the agent left it.
 */

/** package.json fields that decide what a check says. */
const PACKAGE_FIELDS = ["scripts", "jest", "mocha", "ava", "c8", "nyc", "tap", "vitest"] as const;

/** Section headers of TOML and INI files that configure a test runner (pyproject.toml, setup.cfg). */
const RUNNER_SECTION = /^(tool\.(pytest|tox|coverage|hatch\.envs)|tool:pytest|coverage:|pytest$)/;

/** The files a judge part is read from, by their name. */
export const PARTLY_JUDGES: readonly string[] = ["package.json", "pyproject.toml", "setup.cfg"];

/** A judge part's change: what changed (`scripts.test`, `[tool.pytest.ini_options]`) and its diff lines. */
export interface PartChange {
  what: string[];
  /** `-` lines as it was, `+` lines as the agent left it. */
  lines: string[];
}

type Json = Record<string, unknown>;

function parseObject(text: string | null): Json | null {
  if (text === null) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function pretty(key: string, value: unknown, sign: "-" | "+"): string[] {
  if (value === undefined) return [];
  return JSON.stringify({ [key]: value }, null, 2)
    .split("\n")
    .slice(1, -1)
    .map((line) => `${sign}${line}`);
}

function packageChange(before: Json, after: Json): PartChange | null {
  const what: string[] = [];
  const lines: string[] = [];
  for (const field of PACKAGE_FIELDS) {
    const was = before[field];
    const now = after[field];
    if (same(was, now)) continue;
    if (typeof was === "object" && was !== null && typeof now === "object" && now !== null) {
      const keys = new Set([...Object.keys(was), ...Object.keys(now)]);
      for (const key of keys) if (!same((was as Json)[key], (now as Json)[key])) what.push(`${field}.${key}`);
    } else what.push(field);
    lines.push(...pretty(field, was, "-"), ...pretty(field, now, "+"));
  }
  return what.length === 0 ? null : { what, lines };
}

/** A TOML or INI file cut into its sections: the header (without brackets; "" before the first) and its lines. */
function sections(text: string): { header: string; lines: string[] }[] {
  const out: { header: string; lines: string[] }[] = [{ header: "", lines: [] }];
  for (const line of text.split("\n")) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(line);
    if (header !== null) out.push({ header: header[1] ?? "", lines: [line] });
    else out[out.length - 1]?.lines.push(line);
  }
  return out;
}

const runnerText = (text: string) =>
  sections(text)
    .filter((s) => RUNNER_SECTION.test(s.header))
    .map((s) => ({ header: s.header, body: s.lines.join("\n").trimEnd() }));

function sectionChange(before: string, after: string): PartChange | null {
  const was = runnerText(before);
  const now = runnerText(after);
  const what: string[] = [];
  const lines: string[] = [];
  for (const header of new Set([...was.map((s) => s.header), ...now.map((s) => s.header)])) {
    const a = was.find((s) => s.header === header)?.body;
    const b = now.find((s) => s.header === header)?.body;
    if (a === b) continue;
    what.push(`[${header}]`);
    const aLines = (a ?? "").split("\n");
    const bLines = (b ?? "").split("\n");
    lines.push(
      ...aLines.filter((l) => a !== undefined && !bLines.includes(l)).map((l) => `-${l}`),
      ...bLines.filter((l) => b !== undefined && !aLines.includes(l)).map((l) => `+${l}`),
    );
  }
  return what.length === 0 ? null : { what, lines };
}

const nameOf = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/**
 * How the judge part of `path` changed from `before` to `after` (null text: no such file), or null when
 * it did not. A package.json that is not a JSON object is judged whole: every change to it is one.
 */
export function judgePartChange(
  path: string,
  before: string | null,
  after: string | null,
): PartChange | null {
  if (nameOf(path) === "package.json") {
    const a = parseObject(before);
    const b = parseObject(after);
    if (a === null || b === null)
      return before === after ? null : { what: ["(not a JSON object)"], lines: [] };
    return packageChange(a, b);
  }
  return sectionChange(before ?? "", after ?? "");
}

/**
 * `after` with its judge part as it was in `before`, the rest as it is: what the proof runs with. Null
 * when the file should simply be put back as it was (it was not there, or it cannot be read apart).
 */
export function withJudgePartOf(path: string, before: string | null, after: string): string | null {
  if (before === null) return null;
  if (nameOf(path) === "package.json") {
    const a = parseObject(before);
    const b = parseObject(after);
    if (a === null || b === null) return null;
    const merged: Json = { ...b };
    for (const field of PACKAGE_FIELDS)
      if (a[field] === undefined) delete merged[field];
      else merged[field] = a[field];
    return `${JSON.stringify(merged, null, 2)}\n`;
  }
  const kept = sections(after).filter((s) => !RUNNER_SECTION.test(s.header));
  const judged = sections(before).filter((s) => RUNNER_SECTION.test(s.header));
  return `${[...kept, ...judged]
    .map((s) => s.lines.join("\n"))
    .join("\n")
    .trimEnd()}\n`;
}
