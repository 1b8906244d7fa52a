/** Small frictions of the CLI, each fixed: what a person meets and what they are told to do next. */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { INIT_AGENTS } from "../../src/install/agent-hooks.js";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { nextSteps } from "../../src/cli/run-setup.js";
import { resolvePolicy } from "../../src/base/core/index.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";

const project = mkdtempSync(join(tmpdir(), "reins-frictions-"));
mkdirSync(join(project, ".reins"));
const stuck = "session:4f2a9c1e-stuck";

async function reins(...argv: string[]) {
  const io = memoryIo({ cwd: project });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

beforeAll(async () => {
  // A session whose breaker opened: the same call, failing the same way, made again and again.
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  const policy = resolvePolicy({});
  const at = Date.now() - 60_000;
  for (let i = 0; i < 8; i++) {
    const call = { kind: "tool.requested" as const, at: at + i * 2_000, scope: stuck, tool: "Bash" };
    await store.append(stuck, [{ ...call, inputHash: "same", command: "npm test" }], policy);
    await store.append(
      stuck,
      [
        {
          kind: "tool.completed" as const,
          at: at + i * 2_000 + 1_000,
          scope: stuck,
          tool: "Bash",
          inputHash: "same",
          command: "npm test",
          outcome: "failure" as const,
          exitCode: 1,
          outputHash: "same-error",
        },
      ],
      policy,
    );
  }
  await store.close();
});

describe("reins status on an open breaker", () => {
  it("prints the exact command that lets the agent try again", async () => {
    const status = JSON.parse((await reins("status", stuck, "--json")).out) as [
      { breaker: { status: string } },
    ];
    expect(status[0].breaker.status).toBe("open");
    const { code, out } = await reins("status", stuck);
    expect(code).toBe(0);
    expect(out).toContain(`to let it try again: reins circuit ack ${stuck} --reason "<why it may go on>"`);
  });

  it("counts one scope in the singular", async () => {
    const { out } = await reins("status");
    expect(out).toMatch(/holds 1 scope, \d+ events/);
    expect(out).toMatch(/16 events {2}1 open alert\n/);
  });
});

describe("reins circuit ack", () => {
  it("answers a mistyped scope with the nearest one, in one line and exit 2", async () => {
    const { code, err } = await reins("circuit", "ack", "session:4f2a9c1e-stuk");
    expect(code).toBe(EXIT.usage);
    expect(err).toBe(
      `reins: no scope "session:4f2a9c1e-stuk" in the store; did you mean \`${stuck}\`? (see \`reins sessions\`)\n`,
    );
  });

  it("takes a bare session id for its session's scope", async () => {
    const { code, out } = await reins("circuit", "ack", "4f2a9c1e-stuck", "--reason", "fixed the db");
    expect(code).toBe(0);
    expect(out).toBe(`acknowledged: ${stuck} is now active, breaker half_open\n`);
  });
});

describe("reins init without an agent", () => {
  it("lists the agents it knows, as the agent registry names them", async () => {
    const { code, err } = await reins("init");
    expect(code).toBe(EXIT.usage);
    expect(err).toContain("missing required argument 'agent'");
    expect(err).toContain(`reins init knows ${INIT_AGENTS.join(", ")}: e.g. \`reins init claude\``);
    expect(INIT_AGENTS).toEqual(expect.arrayContaining(["claude", "codex", "gemini"]));
  });
});

describe("--cwd", () => {
  it("that is no folder is one line and a usage error", async () => {
    const { code, out, err } = await reins("--cwd", "/nonexistent/reins-x", "status");
    expect(code).toBe(EXIT.usage);
    expect(out).toBe("");
    expect(err).toBe("reins: --cwd /nonexistent/reins-x: no such folder\n");
  });
});

describe("reins demo", () => {
  it("wraps the guards' messages at word boundaries, within 100 columns for a pipe", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-frictions-demo-"));
    const io = memoryIo({ cwd: dir });
    expect(await run(["--store", "memory", "demo", "--agent", "stuck"], io)).toBe(0);
    const lines = io.out.join("").split("\n");
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
    // Joined back, a wrapped message reads whole: no word was cut to make it fit.
    const text = lines.map((l) => l.trim()).join(" ");
    expect(text).toContain(
      "The same Bash call `node scripts/migrate.js` was made 5 times in a row, failing the same way each time.",
    );
  });
});

describe("the end of reins run", () => {
  it("says how to merge the run's branch and how to go back", () => {
    const [proven] = nextSteps("proven", "reins/20261201-x");
    expect(proven).toBe(
      "next: the work is on reins/20261201-x, checked out: `git switch - && git merge reins/20261201-x` takes it into the branch you were on; `git switch -` goes back to the branch you were on without it",
    );
    for (const kind of ["failed", "paused", "interrupted", "unverified", "awaiting_approval"] as const)
      expect(nextSteps(kind, "reins/r").join("\n")).toContain("`git switch -` goes back");
  });

  it("gives an unwitnessed task, a refactor among them, its next step", () => {
    const lines = nextSteps("unwitnessed", "reins/r");
    expect(lines[0]).toMatch(
      /^next: .*if it is a refactor \(no behaviour changed\), no check can witness it/,
    );
    expect(lines[0]).toContain("the checks as they were still pass with it");
    expect(lines[1]).toContain("`git merge reins/r`");
  });
});
