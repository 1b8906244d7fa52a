/** Text wrapped at word boundaries for the terminal, so no line is cut in the middle of a word. */

/**
 * `text` broken into lines of at most `width` characters at spaces, every line after the first starting
 * with `indent`. A word longer than a line (a path, a URL) keeps its own line whole rather than being cut.
 */
export function wrap(text: string, width: number, indent = ""): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ").filter((w) => w !== "")) {
    const room = width - (lines.length === 0 ? 0 : indent.length);
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "" || lines.length === 0) lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${indent}${l}`)).join("\n");
}
