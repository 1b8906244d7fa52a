/** The help of `reins` and of every subcommand, kept as a snapshot: moving commands between files changes none of it. */
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";

/** The help text of `reins <path...> --help`, read from a fixed folder so the default of `--cwd` is stable. */
async function help(path: readonly string[]): Promise<string> {
  const io = memoryIo({ cwd: "/project" });
  const code = await run([...path, "--help"], io);
  expect(code).toBe(0);
  return io.out.join("");
}

/** The subcommand names a help text lists under "Commands:", without commander's own `help`. */
function subcommands(text: string): string[] {
  const section = text.split("\nCommands:\n")[1];
  if (section === undefined) return [];
  return section
    .split("\n")
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== "help");
}

describe("reins --help", () => {
  it("reads the same for the program and every subcommand", async () => {
    const helps: Record<string, string> = {};
    const walk = async (path: string[]): Promise<void> => {
      const text = await help(path);
      helps[["reins", ...path].join(" ")] = text;
      for (const name of subcommands(text)) await walk([...path, name]);
    };
    await walk([]);
    expect(Object.keys(helps).length).toBeGreaterThan(20);
    await expect(JSON.stringify(helps, null, 2) + "\n").toMatchFileSnapshot("./__snapshots__/cli-help.json");
  });
});
