/** The sections of a specification a task names, read from its markdown file for the task's prompt. */
import { parseSpec, findSection } from "../spec/sections.js";
import { readSpecFile } from "../spec/read.js";
import { ReinsError } from "../../base/core/errors.js";

/**
 * A section as a prompt gives it: its heading's text and the markdown from the heading to the next heading
 * of its level or above.
 */
export interface SpecSection {
  heading: string;
  text: string;
}

/**
 * Splits markdown into sections by its headings, from the parsed tree (src/run/spec/sections.ts), so a `#` line
 * inside a code fence is never a heading and YAML front-matter is never a section.
 */
export function specSections(markdown: string): SpecSection[] {
  return parseSpec(markdown).sections.map((s) => ({ heading: s.heading, text: s.text }));
}

/**
 * The named sections of `file` (relative to the project), in the order named, each with its subsections. A
 * name is a heading's text or its path (`Accounts > Sign up`), matched case-insensitively; a missing one
 * is an error naming it. Read through the section cache.
 */
export async function readSpecSections(
  root: string,
  spec: { file: string; sections: string[] },
): Promise<SpecSection[]> {
  const { sections } = await readSpecFile(root, spec.file);
  return spec.sections.map((name) => {
    const found = findSection(sections, name);
    if (found === undefined) throw new ReinsError("usage", `${spec.file} has no section "${name}"`);
    return { heading: found.heading, text: found.text };
  });
}
