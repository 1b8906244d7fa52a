/**
 * Properties of spec sections and their hashes (issue 14, "Drift property tests"), on random markdown
 * specs: headings of random levels, paragraphs, lists and fenced code holding heading-like lines, and
 * now and then YAML front-matter.
 *
 * Every property runs with a fixed seed; on failure fast-check prints it with the path of the shrunk
 * counterexample (`{ seed: 20261123, path: "3:1" }`). Rerun other seeds with
 * `REINS_SEED=123 npx vitest run src/run/spec`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeSection } from "./normalize.js";
import { hashedSpec } from "./read.js";
import { parseSpec } from "./sections.js";

const SEED = Number(process.env.REINS_SEED ?? 20261123);
const run = (numRuns: number) => ({ seed: SEED, numRuns });

type Block =
  | { kind: "para"; lines: string[] }
  | { kind: "list"; items: string[] }
  | { kind: "code"; fence: "```" | "~~~"; info: string; lines: string[] };

interface SectionSpec {
  depth: number;
  title: string;
  blocks: Block[];
}

interface Doc {
  frontMatter: string | null;
  sections: SectionSpec[];
}

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(" "));
// Lines a code fence holds: words, and lines that would be headings outside it.
const codeLine = fc.oneof(
  line,
  fc.tuple(fc.integer({ min: 1, max: 6 }), word).map(([n, w]) => `${"#".repeat(n)} Fenced ${w}`),
  fc.tuple(fc.integer({ min: 0, max: 3 }), word).map(([n, w]) => `${" ".repeat(n)}## Fenced ${w}`),
);

const block: fc.Arbitrary<Block> = fc.oneof(
  fc.array(line, { minLength: 1, maxLength: 3 }).map((lines) => ({ kind: "para" as const, lines })),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((items) => ({ kind: "list" as const, items })),
  fc
    .record({
      fence: fc.constantFrom("```" as const, "~~~" as const),
      info: fc.constantFrom("", "md", "markdown"),
      lines: fc.array(codeLine, { minLength: 1, maxLength: 4 }),
    })
    .map((c) => ({ kind: "code" as const, ...c })),
);

const docArb: fc.Arbitrary<Doc> = fc.record({
  frontMatter: fc.option(
    word.map((w) => `title: ${w}\ntags: [spec, ${w}]`),
    { freq: 3 },
  ),
  sections: fc
    .array(
      fc.record({
        depth: fc.integer({ min: 1, max: 4 }),
        title: word,
        blocks: fc.array(block, { maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 8 },
    )
    // Titles made unique, so each section's own text differs from every other's.
    .map((list) => list.map((s, i) => ({ ...s, title: `S${i} ${s.title}` }))),
});

function renderBlock(b: Block): string {
  switch (b.kind) {
    case "para":
      return b.lines.join("\n");
    case "list":
      return b.items.map((item) => `- ${item}`).join("\n");
    case "code":
      return [`${b.fence}${b.info}`, ...b.lines, b.fence].join("\n");
  }
}

function render(doc: Doc): string {
  const head = doc.frontMatter === null ? "" : `---\n${doc.frontMatter}\n---\n\n`;
  const body = doc.sections
    .map((s) => [`${"#".repeat(s.depth)} ${s.title}`, ...s.blocks.map(renderBlock)].join("\n\n"))
    .join("\n\n");
  return `${head}${body}\n`;
}

/** The ids the sections should have: the path of headings open above each, by level. */
function expectedIds(doc: Doc): string[] {
  const open: { depth: number; id: string }[] = [];
  return doc.sections.map((s) => {
    while (open.length > 0 && open[open.length - 1]!.depth >= s.depth) open.pop();
    const id = open.length === 0 ? s.title : `${open[open.length - 1]!.id} > ${s.title}`;
    open.push({ depth: s.depth, id });
    return id;
  });
}

const hashes = (markdown: string) => hashedSpec("spec.md", markdown).sections.map((s) => [s.id, s.hash]);

/** Random noise no one means: line endings, trailing whitespace, longer runs of blank lines. */
const noiseArb = fc.record({
  eol: fc.constantFrom("\n", "\r\n", "\r"),
  trailing: fc.array(fc.constantFrom("", "", " ", "  ", "\t", " \t "), { minLength: 1, maxLength: 20 }),
  blanks: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 20 }),
  leading: fc.integer({ min: 0, max: 3 }),
});

type Noise = typeof noiseArb extends fc.Arbitrary<infer T> ? T : never;

function addNoise(markdown: string, noise: Noise, frontMatterLines: number): string {
  const lines = markdown.split("\n");
  const out: string[] = [];
  let blank = 0;
  lines.forEach((l, i) => {
    // The front-matter's own lines keep their form: its fences must stand alone to be front-matter.
    if (i < frontMatterLines) {
      out.push(l);
      return;
    }
    if (l === "" && i < lines.length - 1) {
      // A blank line becomes a run of blank lines.
      const n = noise.blanks[blank++ % noise.blanks.length]!;
      for (let k = 0; k < n; k++) out.push(noise.trailing[(i + k) % noise.trailing.length]!);
      return;
    }
    out.push(l + noise.trailing[i % noise.trailing.length]!);
  });
  return out.join(noise.eol);
}

describe("spec sections (property)", () => {
  it("a heading inside a code fence is never a section; every real heading is one, with its path as id", () => {
    fc.assert(
      fc.property(docArb, (doc) => {
        const parsed = parseSpec(render(doc));
        expect(parsed.sections.map((s) => s.heading)).toEqual(doc.sections.map((s) => s.title));
        expect(parsed.sections.some((s) => s.heading.includes("Fenced"))).toBe(false);
        expect(parsed.sections.map((s) => s.id)).toEqual(expectedIds(doc));
        // Front-matter is data, never a section.
        if (doc.frontMatter !== null)
          expect(parsed.frontMatter).toMatchObject({ title: doc.frontMatter.split("\n")[0]!.slice(7) });
        else expect(parsed.frontMatter).toBeNull();
      }),
      run(300),
    );
  });

  it("CRLF or CR line endings, trailing whitespace and runs of blank lines never change a hash", () => {
    fc.assert(
      fc.property(docArb, noiseArb, (doc, noise) => {
        const markdown = render(doc);
        const frontMatterLines = doc.frontMatter === null ? 0 : doc.frontMatter.split("\n").length + 2;
        // Front-matter must open the file, so blank lines go before the document only when it has none.
        const lead = frontMatterLines === 0 ? "\n".repeat(noise.leading) : "";
        expect(hashes(lead + addNoise(markdown, noise, frontMatterLines))).toEqual(hashes(markdown));
      }),
      run(300),
    );
  });

  it("any other change to a section's text changes its hash and no other section's", () => {
    const change = fc.record({
      section: fc.nat(),
      kind: fc.constantFrom("insert_word", "add_paragraph", "edit_code", "drop_block", "swap_blocks"),
      at: fc.nat(),
      word: fc.stringMatching(/^[a-z]{1,8}$/),
    });
    fc.assert(
      fc.property(docArb, change, (doc, c) => {
        const i = c.section % doc.sections.length;
        const target = doc.sections[i]!;
        const blocks = [...target.blocks];
        const b = blocks.length > 0 ? c.at % blocks.length : -1;
        const pick = b >= 0 ? blocks[b]! : null;
        switch (c.kind) {
          case "insert_word":
            if (pick?.kind === "para" || pick?.kind === "list") {
              const lines = pick.kind === "para" ? [...pick.lines] : [...pick.items];
              lines[0] = `${c.word}x ${lines[0]}`;
              blocks[b] = pick.kind === "para" ? { kind: "para", lines } : { kind: "list", items: lines };
            } else blocks.push({ kind: "para", lines: [`${c.word}x`] });
            break;
          case "add_paragraph":
            blocks.splice(c.at % (blocks.length + 1), 0, { kind: "para", lines: [`${c.word} added`] });
            break;
          case "edit_code":
            if (pick?.kind === "code") blocks[b] = { ...pick, lines: [...pick.lines, `${c.word} = 1`] };
            else blocks.push({ kind: "code", fence: "```", info: "", lines: [`${c.word} = 1`] });
            break;
          case "drop_block":
            if (b >= 0) blocks.splice(b, 1);
            else blocks.push({ kind: "list", items: [c.word] });
            break;
          case "swap_blocks": {
            const j = blocks.length > 1 ? (b + 1) % blocks.length : -1;
            const text = (x: Block) => normalizeSection(renderBlock(x));
            if (j >= 0 && text(blocks[b]!) !== text(blocks[j]!))
              [blocks[b], blocks[j]] = [blocks[j]!, blocks[b]!];
            else blocks.push({ kind: "para", lines: [`${c.word} swapped`] });
            break;
          }
        }
        const changed: Doc = {
          ...doc,
          sections: doc.sections.map((s, k) => (k === i ? { ...s, blocks } : s)),
        };
        const before = hashes(render(doc));
        const after = hashes(render(changed));
        expect(after.map(([id]) => id)).toEqual(before.map(([id]) => id));
        after.forEach(([, hash], k) => {
          if (k === i) expect(hash).not.toBe(before[k]![1]);
          else expect(hash).toBe(before[k]![1]);
        });
      }),
      run(300),
    );
  });
});
