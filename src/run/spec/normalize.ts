/**
 * How a section's text is made comparable before it is hashed: the differences editors make without
 * anyone meaning them (line endings, trailing whitespace, extra blank lines) vanish; every other one stays.
 */

/**
 * The normal form of a section's text: CRLF and CR become LF, trailing whitespace goes from every line,
 * runs of blank lines become one blank line, and blank lines at the start and end go. Idempotent.
 */
export function normalizeSection(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.replace(/\s+$/u, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^\n+|\n+$/g, "");
}
