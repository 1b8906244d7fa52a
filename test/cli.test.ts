/** The commands demo, check and config, and the reins binary itself. */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";

const root = join(import.meta.dirname, "..");

/** A new project folder; its own `.reins` makes it the root, whatever folders above it hold. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-cli-"));
  mkdirSync(join(dir, ".reins"));
  return dir;
}

async function reins(argv: string[], options: Parameters<typeof memoryIo>[0] = {}) {
  const io = memoryIo({ cwd: tempDir(), ...options });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

describe("reins demo", () => {
  it("shows each scripted agent's timeline and a summary of what stopped it", async () => {
    const { code, out } = await reins(["demo"]);
    expect(code).toBe(0);
    for (const title of [
      "healthy test-driven",
      "same failing command",
      "two failing fixes",
      "Thrashing",
      "burst",
      "red tests",
    ]) {
      expect(out).toContain(title);
    }
    const summary = out.slice(out.indexOf("Summary"));
    expect(summary).toMatch(/healthy\s+7\s+0\s+[\d,]+\s+finished with evidence/);
    expect(summary).toMatch(/stuck\s+\d+\s+\d+\s+[\d,]+\s+circuit-breaker/);
    expect(summary).toMatch(/alternating\s+\d+\s+\d+\s+[\d,]+\s+loop-patterns/);
    expect(summary).toMatch(/burst\s+\d+\s+\d+\s+[\d,]+\s+budget/);
    expect(summary).toMatch(/red-claim.*"done" refused by completion-gate/);
    expect(out).toContain("was made 5 times in a row");
  });

  it("prints plain text without colour codes when not on a terminal", async () => {
    const { out } = await reins(["demo", "--agent", "stuck"]);
    expect(out).not.toMatch(/\u001b\[/);
    const coloured = await reins(["demo", "--agent", "stuck"], { color: true });
    expect(coloured.out).toMatch(/\u001b\[/);
  });

  it("rejects an unknown agent with a one-line error", async () => {
    const { code, err } = await reins(["demo", "--agent", "nobody"]);
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain('unknown demo agent "nobody"');
  });
});

describe("reins check", () => {
  it("replays a demo trace without divergence", async () => {
    const dir = tempDir();
    const trace = join(dir, "demo.jsonl");
    expect((await reins(["demo", "--trace", trace])).code).toBe(0);
    const { code, out } = await reins(["check", trace]);
    expect(code).toBe(0);
    expect(out).toMatch(/^ok: (\d+) events replayed, \1 recorded decisions match/);
  });

  it("exits 1 at the first decision that differs from the recording", async () => {
    const dir = tempDir();
    const trace = join(dir, "demo.jsonl");
    await reins(["demo", "--agent", "stuck", "--trace", trace]);
    const lines = readFileSync(trace, "utf8").trim().split("\n");
    const index = lines.findIndex((l) => l.includes('"verdict":"block"'));
    lines[index] = lines[index]!.replace('"verdict":"block"', '"verdict":"allow"');
    writeFileSync(trace, lines.join("\n"));
    const { code, out } = await reins(["check", trace]);
    expect(code).toBe(1);
    expect(out).toContain(`divergence at ${trace}:${index + 1}`);
    expect(out).toContain("recorded allow");
    expect(out).toContain("now block");
  });

  it("answers malformed traces with a one-line error naming the line", async () => {
    const dir = tempDir();
    const cases: [string, RegExp][] = [
      ["{not json", /bad\.jsonl:1: not valid JSON/],
      ['{"event":{"kind":"tool.requested","at":1}}', /bad\.jsonl:1: invalid event: scope/],
      ['{"event":{"kind":"teleport","at":1,"scope":"s"}}', /bad\.jsonl:1: invalid event: kind/],
      ["\n\n[1,2]", /bad\.jsonl:3: invalid event/],
    ];
    for (const [text, message] of cases) {
      const file = join(dir, "bad.jsonl");
      writeFileSync(file, text);
      const { code, err } = await reins(["check", file]);
      expect(code).toBe(2);
      expect(err).toMatch(message);
      expect(err.trim().split("\n")).toHaveLength(1);
    }
    const missing = await reins(["check", join(dir, "nope.jsonl")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read .*nope\.jsonl: ENOENT/);
  });
});

describe("reins config", () => {
  it("prints the effective policy with the source of every value", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "reins.config.json"),
      JSON.stringify({ budget: { session: { tokens: 200000 } } }),
    );
    const { code, out } = await reins(["config"], { cwd: dir, env: { REINS_BUDGET_MODE: "soft" } });
    expect(code).toBe(0);
    expect(out).toMatch(/budget\.session\.tokens\s+200000\s+.*reins\.config\.json/);
    expect(out).toMatch(/budget\.mode\s+"soft"\s+env REINS_BUDGET_MODE/);
    expect(out).toMatch(/circuit\.duplicateThreshold\s+5\s+default/);
  });

  it("reads .reins/config.json when there is no reins.config.json", async () => {
    const dir = tempDir();
    execFileSync("mkdir", ["-p", join(dir, ".reins")]);
    writeFileSync(join(dir, ".reins", "config.json"), JSON.stringify({ circuit: { duplicateThreshold: 7 } }));
    const { out } = await reins(["config", "--json"], { cwd: dir });
    expect(JSON.parse(out).policy.circuit.duplicateThreshold).toBe(7);
  });

  it("names the field, the value and what is allowed for a bad value, and shows the policy reins guards with", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "reins.config.json"),
      JSON.stringify({ budget: { warnAt: "high", mode: "soft" } }),
    );
    const fromFile = await reins(["config"], { cwd: dir });
    expect(fromFile.code).toBe(2);
    expect(fromFile.err).toBe(
      'reins: reins.config.json:1:21: budget.warnAt: got "high"; Invalid input: expected number, received string; reins is guarding with the defaults for it\n',
    );
    expect(fromFile.out).toMatch(/budget\.warnAt\s+0\.8\s+default/);
    expect(fromFile.out).toMatch(/budget\.mode\s+"soft"\s+.*reins\.config\.json/);
    const fromEnv = await reins(["config", "--json"], {
      cwd: tempDir(),
      env: { REINS_CIRCUIT_DUPLICATE_THRESHOLD: "1" },
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.err).toMatch(
      /REINS_CIRCUIT_DUPLICATE_THRESHOLD: circuit\.duplicateThreshold: got 1; .*>=2/,
    );
    expect(JSON.parse(fromEnv.out)).toMatchObject({
      policy: { circuit: { duplicateThreshold: 5 } },
      problems: [expect.stringMatching(/^env REINS_CIRCUIT_DUPLICATE_THRESHOLD: /) as string],
    });
    writeFileSync(join(dir, "reins.config.json"), "{ nope");
    const broken = await reins(["config"], { cwd: dir });
    expect(broken.code).toBe(2);
    expect(broken.err).toMatch(
      /reins\.config\.json:1:3: not valid JSON: .*; reins is guarding with the defaults for all of it/,
    );
    // Other commands go on with the same policy, and say the problem once.
    const status = await reins(["status"], { cwd: dir });
    expect(status.code).toBe(0);
    expect(status.err.trim().split("\n")).toEqual([
      expect.stringMatching(/^reins: reins\.config\.json:1:3: /),
    ]);
  });
});

describe("reins --version", () => {
  it.each([["--version"], ["-V"]])("%s prints the version in package.json and exits 0", async (flag) => {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    const { code, out, err } = await reins([flag]);
    expect(code).toBe(0);
    expect(out).toBe(`${version}\n`);
    expect(err).toBe("");
  });
});

describe("the reins binary", () => {
  it("runs the demo as a real process and exits 0", () => {
    const out = execFileSync(
      process.execPath,
      [join(root, "bin", "reins.js"), "demo", "--agent", "healthy"],
      {
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined },
      },
    );
    expect(out).toContain("finished with evidence");
  });

  it("exits 2 with usage help on an unknown command", () => {
    let status = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, [join(root, "bin", "reins.js"), "frobnicate"], {
        encoding: "utf8",
        stdio: "pipe",
      });
    } catch (error) {
      status = (error as { status: number }).status;
      stderr = (error as { stderr: string }).stderr;
    }
    expect(status).toBe(2);
    expect(stderr).toContain("unknown command 'frobnicate'");
  });
});
