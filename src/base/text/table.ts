/** Plain-text tables for the terminal, padded by visible width (ANSI colours ignored). */

/** Visible width of a string, ignoring ANSI colour codes. */
export function visibleWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, "").length;
}

/** Pads to a visible width. */
export function pad(text: string, width: number, align: "left" | "right" = "left"): string {
  const fill = " ".repeat(Math.max(0, width - visibleWidth(text)));
  return align === "left" ? text + fill : fill + text;
}

/** A plain-text table: a header row, a rule, and the rows, columns padded to fit. */
export function table(header: string[], rows: string[][], align: ("left" | "right")[] = []): string {
  const widths = header.map((h, i) =>
    Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ""))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => pad(c, widths[i] ?? 0, align[i] ?? "left"))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n") + "\n";
}
