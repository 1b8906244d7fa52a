/**
 * The sections of a markdown specification, from its syntax tree (mdast): a `#` line inside a code fence
 * is code, not a heading, and YAML front-matter is read as data, never taken for a section. Pure: the
 * caller reads the file.
 */
import type { Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { frontmatterFromMarkdown } from "mdast-util-frontmatter";
import { toString } from "mdast-util-to-string";
import { frontmatter } from "micromark-extension-frontmatter";
import { parse as parseYaml } from "yaml";

/**
 * One section: a top-level heading and the markdown under it. Its own text runs to the next heading of any
 * level, and is what its hash covers, so a change in a subsection changes that subsection's hash only; its
 * whole text runs to the next heading of its level or above, subsections included, and is what a prompt
 * gives the agent.
 */
export interface Section {
  /** The heading's text, trimmed. */
  heading: string;
  /** The headings from the outermost down to this one: `["Accounts", "Sign up"]`. */
  path: string[];
  /**
   * Its identity in the file: the parent's id and this heading joined by ` > ` (`Accounts > Sign up`). A
   * path met again gets ` (2)`, ` (3)`... in document order, so every id in a file is unique and the same
   * markdown always gives the same ids.
   */
  id: string;
  /** The id of the enclosing section, or null at the top. */
  parent: string | null;
  /** 1 to 6. */
  depth: number;
  /** The heading's own text only, to the next heading of any level: what is hashed. */
  own: string;
  /** The whole section, subsections included, as written. */
  text: string;
}

/** A parsed specification: its front-matter and its sections in document order. */
export interface ParsedSpec {
  /** The YAML front-matter as data, or null when there is none (or it is not valid YAML). */
  frontMatter: unknown;
  /** Why the front-matter could not be read, or null. */
  frontMatterError: string | null;
  sections: Section[];
}

interface Found {
  depth: number;
  heading: string;
  start: number;
}

/** Parses markdown into front-matter and sections: top-level headings only, none inside code or quotes. */
export function parseSpec(markdown: string): ParsedSpec {
  const tree: Root = fromMarkdown(markdown, {
    extensions: [frontmatter(["yaml"])],
    mdastExtensions: [frontmatterFromMarkdown(["yaml"])],
  });
  let frontMatter: unknown = null;
  let frontMatterError: string | null = null;
  const headings: Found[] = [];
  for (const node of tree.children) {
    if (node.type === "yaml") {
      try {
        frontMatter = (parseYaml(node.value) as unknown) ?? null;
      } catch (error) {
        frontMatterError = error instanceof Error ? error.message.split("\n")[0]! : String(error);
      }
    } else if (node.type === "heading" && node.position?.start.offset !== undefined) {
      headings.push({
        depth: node.depth,
        heading: toString(node).trim(),
        start: node.position.start.offset,
      });
    }
  }
  return { frontMatter, frontMatterError, sections: toSections(markdown, headings) };
}

function toSections(markdown: string, headings: readonly Found[]): Section[] {
  const used = new Set<string>();
  const open: Section[] = [];
  const out: Section[] = [];
  headings.forEach((h, i) => {
    while (open.length > 0 && open[open.length - 1]!.depth >= h.depth) open.pop();
    const parent = open[open.length - 1] ?? null;
    const base = parent === null ? h.heading : `${parent.id} > ${h.heading}`;
    // A duplicate takes the first free number: ` (2)` may itself be a heading someone wrote.
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base} (${n})`;
    used.add(id);
    const ownEnd = headings[i + 1]?.start ?? markdown.length;
    const end = headings.slice(i + 1).find((next) => next.depth <= h.depth)?.start ?? markdown.length;
    const section: Section = {
      heading: h.heading,
      path: [...(parent?.path ?? []), h.heading],
      id,
      parent: parent?.id ?? null,
      depth: h.depth,
      own: markdown.slice(h.start, ownEnd),
      text: markdown.slice(h.start, end),
    };
    open.push(section);
    out.push(section);
  });
  return out;
}

const fold = (name: string) =>
  name
    .split(">")
    .map((part) => part.trim())
    .join(" > ")
    .toLowerCase();

/**
 * The section a task names: by its heading text, its heading path (`Accounts > Sign up`) or its id, all
 * case-insensitively; the first in document order when several match. Undefined when none does.
 */
export function findSection(sections: readonly Section[], name: string): Section | undefined {
  const text = name.trim().toLowerCase();
  const path = fold(name);
  return (
    sections.find((s) => s.heading.toLowerCase() === text) ??
    sections.find((s) => s.id.toLowerCase() === path || fold(s.path.join(" > ")) === path)
  );
}

/** A section and every section nested in it, in document order. */
export function sectionsUnder(sections: readonly Section[], top: Section): Section[] {
  const ids = new Set([top.id]);
  const out: Section[] = [];
  for (const s of sections) {
    if (s.id === top.id) out.push(s);
    else if (s.parent !== null && ids.has(s.parent)) {
      ids.add(s.id);
      out.push(s);
    }
  }
  return out;
}
