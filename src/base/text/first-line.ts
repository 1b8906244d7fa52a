/** The gist of a text for a message: its first non-empty line. */

/** The first non-empty line of a text, trimmed, or "": the gist of a tool's error output for a message. */
export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "") ?? ""
  );
}
