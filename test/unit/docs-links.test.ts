/**
 * The README and docs/*.md hold together: every relative link names a file that is there and every #anchor a
 * heading of its page (GitHub's anchors), and every `reins <command>` the README shows is a real command.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";

const root = join(import.meta.dirname, "..", "..");
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** A page's prose: fenced code blocks and HTML comments blanked, so only what renders as a link is read. */
function prose(text: string): string {
  return text.replace(/<!--[\s\S]*?-->/g, "").replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** GitHub's anchor of a heading: its text lowercased, punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a page has: its headings' slugs, a repeated one numbered as GitHub numbers it. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(readFileSync(file, "utf8")).split("\n")) {
    const heading = /^#{1,6} (.+?)#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The targets of a page's links and images, inline code aside. */
function linksOf(text: string): string[] {
  const body = prose(text).replace(/`[^`\n]*`/g, "");
  return [...body.matchAll(/!?\[(?:[^\]]|\][^(])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** What is wrong with one link of a page: a file not there, or an anchor its page does not have. */
function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return null; // https:, mailto:: not this test's to reach
  const [path = "", anchor] = target.split("#", 2);
  const file = path === "" ? join(root, page) : resolve(dirname(join(root, page)), decodeURI(path));
  if (!existsSync(file)) return `${page}: ${target}: no file ${relative(root, file)}`;
  if (anchor === undefined) return null;
  if (!file.endsWith(".md") || statSync(file).isDirectory())
    return `${page}: ${target}: an anchor into a file that is no page`;
  return anchorsOf(file).has(anchor)
    ? null
    : `${page}: ${target}: ${relative(root, file)} has no heading #${anchor}`;
}

/** The CLI's commands: each command path ("", "budget", ...) with the subcommands its help lists. */
async function commandTree(): Promise<Map<string, Set<string>>> {
  const tree = new Map<string, Set<string>>();
  const walk = async (path: string[]): Promise<void> => {
    const io = memoryIo({ cwd: "/project" });
    expect(await run([...path, "--help"], io)).toBe(0);
    const section = io.out.join("").split("\nCommands:\n")[1] ?? "";
    const names = section
      .split("\n")
      .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined && name !== "help");
    tree.set(path.join(" "), new Set(names));
    // The program's own options (`reins --version`) stand where a command would.
    if (path.length === 0)
      for (const option of section === "" ? [] : io.out.join("").matchAll(/(?<=^|[\s,])(--?[\w-]+)/gm))
        tree.get("")?.add(option[1]!);
    for (const name of names) await walk([...path, name]);
  };
  await walk([]);
  return tree;
}

/** Each `reins ...` command line the README shows: in its sh code blocks, and its inline code. */
function readmeCommands(text: string): string[] {
  const shown: string[] = [];
  for (const block of text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/gm))
    for (const line of block[1]!.split("\n"))
      for (const part of line.replace(/\s#.*$/, "").split(/&&|\|\||;|\|/))
        if (/^\s*(npx )?reins /.test(part)) shown.push(part.trim().replace(/^npx /, ""));
  for (const span of prose(text).matchAll(/`(reins [^`]+)`/g)) shown.push(span[1]!);
  return shown;
}

/** What is wrong with one command line: a command, or a subcommand of a command that has them, that is not there. */
function unknownCommand(tree: Map<string, Set<string>>, line: string): string | null {
  const words = line.split(/\s+/).slice(1);
  const command = words[0] ?? "";
  if (!(tree.get("")?.has(command) ?? false)) return `${line}: no command "${command}"`;
  const subcommands = tree.get(command) ?? new Set<string>();
  const second = words[1];
  if (subcommands.size === 0 || second === undefined || !/^[a-z][\w-]*$/.test(second)) return null;
  return subcommands.has(second) ? null : `${line}: "${command}" has no subcommand "${second}"`;
}

describe("the README and docs/", () => {
  it("link only to files that are there, and to headings their pages have", () => {
    const broken = pages.flatMap((page) =>
      linksOf(readFileSync(join(root, page), "utf8")).flatMap((target) => brokenLink(page, target) ?? []),
    );
    expect(broken).toEqual([]);
    // The check reads links at all: the README links into docs/, and every page links back to it.
    expect(linksOf(readFileSync(join(root, "README.md"), "utf8")).length).toBeGreaterThan(20);
    const noWayBack = pages.filter(
      (page) =>
        page !== "README.md" && !linksOf(readFileSync(join(root, page), "utf8")).includes("../README.md"),
    );
    expect(noWayBack, "pages with no link back to the README").toEqual([]);
  });

  it("are told apart from a broken link and a missing anchor", () => {
    expect(brokenLink("README.md", "docs/install.md#install-for-users")).toBe(null);
    expect(brokenLink("README.md", "docs/no-such-page.md")).toMatch(/no file docs\/no-such-page\.md/);
    expect(brokenLink("README.md", "#no-such-heading")).toMatch(/README\.md has no heading #no-such-heading/);
    expect(slug("Store size and `reins gc`")).toBe("store-size-and-reins-gc");
    expect(slug("Many projects, one daemon")).toBe("many-projects-one-daemon");
  });

  it("show only real reins commands in the README", async () => {
    const tree = await commandTree();
    const shown = readmeCommands(readFileSync(join(root, "README.md"), "utf8"));
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.flatMap((line) => unknownCommand(tree, line) ?? [])).toEqual([]);
    expect(unknownCommand(tree, "reins statuss")).toMatch(/no command "statuss"/);
    expect(unknownCommand(tree, "reins budget grow session:x 1")).toMatch(
      /"budget" has no subcommand "grow"/,
    );
  });

  it("describe every command of the CLI in docs/cli.md", async () => {
    const tree = await commandTree();
    const headings = [
      ...readFileSync(join(root, "docs", "cli.md"), "utf8").matchAll(/^### `(reins [^`]+)`/gm),
    ].map((m) => m[1]!);
    const commands = [...tree.entries()].flatMap(([path, names]) =>
      [...names]
        .filter((name) => !name.startsWith("-"))
        .map((name) => `reins ${path === "" ? "" : `${path} `}${name}`),
    );
    // A command is described when a heading names it, or names its parent with it among the forms (`start|stop`).
    const undescribed = commands.filter(
      (command) =>
        !headings.some((heading) => heading === command || heading.startsWith(`${command} `)) &&
        !headings.some((heading) => {
          const words = command.split(" ");
          const last = words.pop()!;
          return (
            heading.startsWith(`${words.join(" ")} `) &&
            heading.split(" ")[words.length]!.split("|").includes(last)
          );
        }),
    );
    expect(undescribed, "commands with no heading in docs/cli.md").toEqual([]);
  });

  it("show a plan in the README that reins plan check takes", async () => {
    const plan = /^```yaml\n# reins\.plan\.yaml\n([\s\S]*?)^```$/m.exec(
      readFileSync(join(root, "README.md"), "utf8"),
    )?.[1];
    expect(plan, "the README's reins.plan.yaml").toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "reins-readme-plan-"));
    try {
      writeFileSync(join(dir, "reins.plan.yaml"), plan!);
      const io = memoryIo({ cwd: dir });
      expect(await run(["plan", "check", "reins.plan.yaml"], io), io.err.join("")).toBe(0);
      expect(io.out.join("")).toContain("3 tasks to run");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
