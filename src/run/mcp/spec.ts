/** `read_spec`: one section of the specification files a plan names, found by its heading. */
import { readFile } from "node:fs/promises";
import { ReinsError } from "../../base/core/errors.js";
import { specPath } from "../spec/read.js";
import { specSections, type SpecSection } from "../drive/spec.js";
import { quoteInput, someOf, specFiles, type PlanView } from "./plan-view.js";

/** A spec file larger than this is not read: a specification, not a data file. */
const MAX_SPEC_BYTES = 4 * 1024 * 1024;

/** The sections of one spec file (relative to the project); refused outside the project. */
async function sectionsOf(root: string, file: string): Promise<SpecSection[]> {
  const path = specPath(root, file);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ReinsError(
      "not_found",
      `the spec ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  if (Buffer.byteLength(text) > MAX_SPEC_BYTES)
    throw new ReinsError("usage", `the spec ${file} is larger than ${MAX_SPEC_BYTES} bytes`);
  return specSections(text);
}

/**
 * The text of the section whose heading is `section` (case and surrounding spaces aside), from the heading
 * to the next heading of its level or above, looked up across the spec files the plan names (or in `file`
 * alone). An unknown section is an error naming the known ones; a heading in two files asks for the file.
 */
export async function readSpec(
  root: string,
  view: PlanView,
  section: string,
  file?: string,
): Promise<{ file: string; heading: string; text: string }> {
  const files = specFiles(view);
  if (files.length === 0)
    throw new ReinsError(
      "not_found",
      `plan ${view.name} names no spec file (a task's spec: file and sections)`,
    );
  if (file !== undefined && !files.includes(file))
    throw new ReinsError(
      "not_found",
      `the plan names no spec file ${quoteInput(file)}; it names ${someOf(files)}`,
    );
  const wanted = section.trim().toLowerCase();
  const found: { file: string; section: SpecSection }[] = [];
  const known: string[] = [];
  for (const f of file !== undefined ? [file] : files) {
    for (const s of await sectionsOf(root, f)) {
      known.push(`${JSON.stringify(s.heading)} (${f})`);
      if (s.heading.toLowerCase() === wanted) found.push({ file: f, section: s });
    }
  }
  const [first, second] = found;
  if (first === undefined)
    throw new ReinsError("not_found", `no section ${quoteInput(section)}; known sections: ${someOf(known)}`);
  if (second !== undefined && second.file !== first.file)
    throw new ReinsError(
      "conflict",
      `section ${quoteInput(section)} is in ${someOf([...new Set(found.map((x) => x.file))])}: name the file`,
    );
  return { file: first.file, heading: first.section.heading, text: first.section.text };
}
