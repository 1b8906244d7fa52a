/** Reading spec-kit's tasks.md at the text level: a task line, a phase heading, a labelled paragraph. */
import type { Nodes } from "mdast";

/** The labels of a phase's paragraphs that say what it must achieve. */
const ACCEPTANCE_LABELS = new Set(["goal", "purpose", "independent test", "checkpoint"]);

/** `T012 [P] [US1] Create model (depends on T010, T011)` → id, markers, title and the deps named in it. */
export function parseTaskText(text: string): {
  id: string | null;
  parallel: boolean;
  title: string;
  deps: string[];
} {
  let rest = text;
  const idMatch = /^\**(T\d+[A-Za-z]?(?:\.\d+)*)\**[:.]?\s+/.exec(rest);
  const id = idMatch?.[1] ?? null;
  if (idMatch) rest = rest.slice(idMatch[0].length);
  let parallel = false;
  for (let marker = /^\[([^\]]+)\]\s*/.exec(rest); marker; marker = /^\[([^\]]+)\]\s*/.exec(rest)) {
    const label = marker[1]!.trim();
    if (/^p$/i.test(label)) parallel = true;
    else if (!/^(US|Story\s*)\d+$/i.test(label)) break;
    rest = rest.slice(marker[0].length);
  }
  const deps: string[] = [];
  for (const match of rest.matchAll(
    /\b(?:depends on|blocked by|requires|after):?\s+((?:T\d+[A-Za-z]?(?:\.\d+)*\b(?:\s*(?:,|and|&)\s*)?)+)/gi,
  ))
    deps.push(...(match[1]!.match(/T\d+[A-Za-z]?(?:\.\d+)*\b/g) ?? []));
  return { id, parallel, title: rest.trim(), deps: [...new Set(deps)].filter((dep) => dep !== id) };
}

/** `**Goal**: Browse albums` → `Goal: Browse albums`, for the labels that say what a phase must achieve. */
export function acceptanceLine(text: string): string | null {
  const match = /^\*\*([^*]+?):?\*\*:?\s*(.+)$/.exec(text);
  if (!match || !ACCEPTANCE_LABELS.has(match[1]!.trim().toLowerCase())) return null;
  return `${match[1]!.trim()}: ${match[2]!.trim()}`;
}

/** A heading's words without markup. */
export function plainText(node: Nodes): string {
  if ("value" in node && typeof node.value === "string") return node.value;
  if ("children" in node) return (node.children as Nodes[]).map(plainText).join("");
  return "";
}

/** `Phase 3: User Story 1` → `phase-3`; another heading → its words as an id. */
export function groupId(title: string, index: number): string {
  const phase = /^phase\s+(\d+[a-z]?(?:\.\d+)*)(?![\w.])/i.exec(title);
  if (phase) return `phase-${phase[1]!.toLowerCase()}`;
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 56);
  return slug || `group-${index + 1}`;
}

export function uniqueId(id: string, taken: Set<string>): string {
  let unique = id;
  for (let n = 2; taken.has(unique); n++) unique = `${id}-${n}`;
  taken.add(unique);
  return unique;
}

/** The folder a tasks.md sits in names the feature: `specs/001-photo-albums/tasks.md` → `001-photo-albums`. */
export function folderName(file: string): string | null {
  const parts = file.split(/[\\/]/).filter((part) => part && part !== ".");
  return parts.length >= 2 ? (parts[parts.length - 2] ?? null) : null;
}

/** YAML front matter (`---` … `---` first) is not markdown: blank its lines, keeping line numbers. */
export function blankFrontMatter(text: string): string {
  const match = /^---\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  return match ? match[0].replace(/[^\n]/g, "") + text.slice(match[0].length) : text;
}
