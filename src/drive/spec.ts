/** The sections of a specification a task names, read from its markdown file for the task's prompt. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { fromMarkdown } from "mdast-util-from-markdown";
import { toString } from "mdast-util-to-string";
import { ReinsError } from "../core/errors.js";

/** A section: its heading's text and the markdown from the heading to the next heading of its level or above. */
export interface SpecSection {
  heading: string;
  text: string;
}

/**
 * Splits markdown into sections by its headings, from the parsed tree, so a `#` line inside a code fence
 * is never a heading.
 */
export function specSections(markdown: string): SpecSection[] {
  const tree = fromMarkdown(markdown);
  const headings = tree.children.flatMap((node) =>
    node.type === "heading" && node.position !== undefined
      ? [{ depth: node.depth, heading: toString(node).trim(), start: node.position.start.offset ?? 0 }]
      : [],
  );
  return headings.map((h, i) => {
    const end = headings.slice(i + 1).find((next) => next.depth <= h.depth)?.start ?? markdown.length;
    return { heading: h.heading, text: markdown.slice(h.start, end) };
  });
}

/** The named sections of `file` (relative to the project), in the order named; a missing one is an error naming it. */
export async function readSpecSections(
  root: string,
  spec: { file: string; sections: string[] },
): Promise<SpecSection[]> {
  const path = resolve(root, spec.file);
  let markdown: string;
  try {
    markdown = await readFile(path, "utf8");
  } catch (error) {
    throw new ReinsError(
      "usage",
      `cannot read the spec ${spec.file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  const all = specSections(markdown);
  return spec.sections.map((name) => {
    const found = all.find((s) => s.heading.toLowerCase() === name.trim().toLowerCase());
    if (found === undefined) throw new ReinsError("usage", `${spec.file} has no section "${name}"`);
    return found;
  });
}
