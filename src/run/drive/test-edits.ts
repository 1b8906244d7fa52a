/**
 * What a person reads before approving judges an agent changed: the diff of their tests' assertions, and
 * every changed line of the other judges (scripts, configuration), from the diff of the files. Pure text
 * work; the shell runs git.
 */

/** A line that states what a test expects, in the common test frameworks' words. */
const ASSERTION =
  /\b(assert\w*|expect\w*|should|must|verify|to(Be|Equal|Match|Throw|Contain|Have)\w*|equals?|deepEqual|strictEqual|raises|throws|rejects|t\.(Error|Fatal|Fail)\w*|require\.\w+|check)\b|[=!]==?|@pytest\.mark\.(skip|xfail)|\.(skip|only|todo)\(/;

/** Lines per file and bytes in all: enough to see what changed, short enough for a report and a trace. */
const MAX_LINES_PER_FILE = 40;
const MAX_BYTES = 6_000;

/**
 * The assertion lines a unified diff adds or removes, per file (`--- path` headers), or every changed line
 * of a file none of whose changed lines looks like an assertion (a person should still see it). Cut to
 * bounds, with a line saying so.
 */
export function assertionDiff(diff: string): string {
  const files: { path: string; changed: string[] }[] = [];
  for (const line of diff.split("\n")) {
    const header = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (header !== null) {
      files.push({ path: header[2] ?? header[1] ?? "", changed: [] });
      continue;
    }
    const file = files[files.length - 1];
    if (file === undefined || line.startsWith("+++") || line.startsWith("---")) continue;
    if (line.startsWith("+") || line.startsWith("-")) file.changed.push(line);
  }
  const out: string[] = [];
  for (const file of files) {
    const asserting = file.changed.filter((line) => ASSERTION.test(line.slice(1)));
    const shown = asserting.length > 0 ? asserting : file.changed;
    out.push(`--- ${file.path}`, ...shown.slice(0, MAX_LINES_PER_FILE));
    if (shown.length > MAX_LINES_PER_FILE) out.push(`[… ${shown.length - MAX_LINES_PER_FILE} more lines]`);
  }
  const text = out.join("\n");
  if (Buffer.byteLength(text) <= MAX_BYTES) return text;
  return `${Buffer.from(text)
    .subarray(0, MAX_BYTES)
    .toString("utf8")
    .replace(/\uFFFD$/, "")}\n[… cut at ${MAX_BYTES} bytes]`;
}
