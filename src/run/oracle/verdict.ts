/** The reviewer's verdict, read from whatever text a model answered. Pure: no I/O. */

/** What the reviewer model judged. */
export interface OracleVerdict {
  /** True: the diff does not meet the acceptance criteria, so `complete` stays refused. */
  veto: boolean;
  /** 0 to 1. */
  confidence: number;
  /** What is missing or wrong, one line each (at most MAX_FINDINGS, each at most MAX_FINDING characters). */
  findings: string[];
  summary: string;
}

/** A verdict read, or why none could be. */
export type ParsedVerdict =
  { kind: "verdict"; verdict: OracleVerdict } | { kind: "unreadable"; reason: string };

const MAX_FINDINGS = 20;
const MAX_FINDING = 500;
const MAX_SUMMARY = 1_000;
/** Text scanned for a verdict: a model answer longer than this is not a verdict anyway. */
const MAX_TEXT = 64 * 1024;

/** One line, bounded, without control characters (a model's text ends up in an agent's context). */
function line(text: string, max: number): string {
  const flat = text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Every balanced `{...}` in `text` (strings and escapes respected), outermost first, in order. */
function objectsIn(text: string): string[] {
  const found: string[] = [];
  // Bounded tries: a hostile answer of unclosed braces must not make this quadratic in its length.
  let tries = 0;
  for (let start = text.indexOf("{"); start >= 0 && tries++ < 200; start = text.indexOf("{", start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        found.push(text.slice(start, i + 1));
        break;
      }
    }
  }
  return found;
}

/** The verdict an object states, or null when it is not one: `veto` must be a boolean. */
function verdictOf(value: unknown): OracleVerdict | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const veto = Object.hasOwn(record, "veto") ? record.veto : undefined;
  if (typeof veto !== "boolean") return null;
  const raw = Object.hasOwn(record, "confidence") ? record.confidence : undefined;
  const confidence = typeof raw === "number" && Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : 0.5;
  const list = Object.hasOwn(record, "findings") ? record.findings : undefined;
  const findings = (Array.isArray(list) ? list : [])
    .filter((f): f is string => typeof f === "string")
    .map((f) => line(f, MAX_FINDING))
    .filter((f) => f !== "")
    .slice(0, MAX_FINDINGS);
  const summary =
    Object.hasOwn(record, "summary") && typeof record.summary === "string" ? record.summary : "";
  return { veto, confidence, findings, summary: line(summary, MAX_SUMMARY) };
}

/**
 * Reads a verdict from a model's answer: the whole text as JSON, else the last JSON object in it (inside
 * prose or a code fence) that has a boolean `veto`. Anything else is unreadable, and an unreadable answer
 * never vetoes. Fields are bounded and flattened to one line each; unknown fields are ignored.
 */
export function parseVerdict(text: string): ParsedVerdict {
  const bounded = text.length > MAX_TEXT ? text.slice(-MAX_TEXT) : text;
  const candidates = [bounded.trim(), ...objectsIn(bounded).reverse()];
  for (const candidate of candidates) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch {
      continue;
    }
    const verdict = verdictOf(value);
    if (verdict !== null) return { kind: "verdict", verdict };
  }
  const shown = line(bounded, 120);
  return {
    kind: "unreadable",
    reason:
      shown === "" ? "the reviewer answered nothing" : `no JSON verdict with a boolean "veto" in: ${shown}`,
  };
}
