/**
 * A spec's section hashes, what a run keeps of its specification: the hash of every section its plan
 * names, and which plan nodes name it, so a later look tells which sections changed and which tasks
 * implement them. Pure: the hashes are computed by the shell (read.ts).
 */
import type { PlanNode } from "../control/types.js";
import { findSection, sectionsUnder, type Section } from "./sections.js";

/** A section with the hash of its normalised own text. */
export interface HashedSection extends Section {
  hash: string;
}

/**
 * The recorded state of the spec, by section key (`spec.md#Accounts > Sign up`): its hash and the plan
 * nodes that name it, directly or through an enclosing section (a node naming `Accounts` names its
 * subsections too). Plain JSON, kept in the run's checkpoint and trace.
 */
export type SectionHashes = Record<string, { hash: string; by: string[] }>;

/** A spec file as the plan names it, in one spelling: `./spec.md` and `spec.md` are one file. */
export function specFileKey(file: string): string {
  return file.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
}

/** A section's key in the section hashes and in `spec.changed`: its file and id, `spec.md#Accounts > Sign up`. */
export function sectionKey(file: string, id: string): string {
  return `${specFileKey(file)}#${id}`;
}

/** The spec files the plan's nodes name, each once, in the order given. */
export function specFiles(nodes: Iterable<PlanNode>): string[] {
  const files = new Set<string>();
  for (const node of nodes)
    if (node.spec !== undefined && node.spec.sections.length > 0) files.add(specFileKey(node.spec.file));
  return [...files];
}

/**
 * The section hashes of the sections `nodes` name, from each file's hashed sections (`files`, keyed by
 * `specFileKey`; a file missing from it could not be read and names nothing). A named section that does
 * not exist is not among them: its appearing later is a change like any other.
 */
export function sectionHashesOf(
  nodes: Iterable<PlanNode>,
  files: ReadonlyMap<string, readonly HashedSection[]>,
): SectionHashes {
  const hashes: SectionHashes = {};
  for (const node of nodes) {
    if (node.spec === undefined) continue;
    const file = specFileKey(node.spec.file);
    const sections = files.get(file) ?? [];
    for (const name of node.spec.sections) {
      const top = findSection(sections, name);
      if (top === undefined) continue;
      for (const s of sectionsUnder(sections, top) as HashedSection[]) {
        const key = sectionKey(file, s.id);
        const entry = (hashes[key] ??= { hash: s.hash, by: [] });
        if (!entry.by.includes(node.id)) entry.by.push(node.id);
      }
    }
  }
  return hashes;
}

/** The change between two section hashes: sections whose hash differs, appeared or vanished; nodes naming them. */
export interface SpecChange {
  /** Section keys, those of `after` first in its order, then those that vanished. */
  sections: string[];
  /** Plan nodes naming a changed section in either, each once, in the order met. */
  nodes: string[];
}

/** The change from `before` to `after`, or null when every section's hash is the same. */
export function specChange(before: SectionHashes, after: SectionHashes): SpecChange | null {
  const sections: string[] = [];
  const nodes = new Set<string>();
  const note = (key: string) => {
    sections.push(key);
    for (const id of [...(before[key]?.by ?? []), ...(after[key]?.by ?? [])]) nodes.add(id);
  };
  for (const key of Object.keys(after)) if (before[key]?.hash !== after[key]?.hash) note(key);
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) note(key);
  return sections.length === 0 ? null : { sections, nodes: [...nodes] };
}
