import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exits } from "#test/processes.js";
import { commandRunner, parseCommand } from "./command.js";
import type { AgentRequest } from "./runner.js";

/** `cmd:` agents run for real: small sh scripts in a temp folder. */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "reins-cmd-agent-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const request = (overrides: Partial<AgentRequest> = {}): AgentRequest => ({
  run: "run-1",
  task: "T1.2",
  attempt: 3,
  mode: "fix",
  prompt: "Fix the failing test.\nIt is `npm test`.\n",
  cwd: dir,
  env: {},
  timeoutMs: 10_000,
  ...overrides,
});

describe("the cmd: runner", () => {
  it("gives the prompt on stdin and the run, task, attempt and mode in the environment", async () => {
    const script =
      'cat > prompt.txt; echo "$REINS_RUN $REINS_TASK $REINS_ATTEMPT $REINS_MODE $EXTRA" > env.txt; echo done';
    const runner = commandRunner(script);
    const result = await runner.run(request({ env: { EXTRA: "from-request" } }));
    expect(readFileSync(join(dir, "prompt.txt"), "utf8")).toBe("Fix the failing test.\nIt is `npm test`.\n");
    expect(readFileSync(join(dir, "env.txt"), "utf8")).toBe("run-1 T1.2 3 fix from-request\n");
    expect(result).toMatchObject({
      outcome: "ok",
      turns: 1,
      tokens: 0,
      costUsd: 0,
      summary: "done",
      exitCode: 0,
    });
    expect(result.raw).toBe("done\n");
    expect(runner.name).toBe(`cmd:${script}`);
  });

  it("maps exit 0 to ok, 75 to transient and any other code to failed, with stderr as the reason", async () => {
    const outcomes = [];
    for (const code of [0, 1, 75, 2]) {
      const result = await commandRunner(`echo out; echo "went wrong $0" >&2; exit ${code}`).run(request());
      outcomes.push([result.exitCode, result.outcome, result.summary]);
    }
    expect(outcomes).toEqual([
      [0, "ok", "out"],
      [1, "failed", "exit 1: went wrong sh"],
      [75, "transient", "exit 75: went wrong sh"],
      [2, "failed", "exit 2: went wrong sh"],
    ]);
  });

  it('reads usage from the last {"reins": ...} line and leaves it out of the summary', async () => {
    writeFileSync(
      join(dir, "agent.sh"),
      [
        `echo '{"reins": {"tokens": 5}}'`,
        "echo 'edited src/a.ts'",
        `echo '{"reins": {"tokens": 1200, "costUsd": 0.25, "turns": 4}}'`,
      ].join("\n"),
    );
    const result = await commandRunner("sh agent.sh").run(request());
    expect(result).toMatchObject({
      outcome: "ok",
      tokens: 1200,
      costUsd: 0.25,
      turns: 4,
      summary: "edited src/a.ts",
    });
  });

  it("kills the whole process group at the time limit and calls the run transient", async () => {
    // A background child writes its pid; it must die with the shell.
    const started = Date.now();
    const result = await commandRunner("sleep 30 & echo $! > child.pid; echo started; wait").run(
      request({ timeoutMs: 300 }),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.outcome).toBe("transient");
    expect(result.exitCode).toBeNull();
    expect(result.raw).toBe("started\n");
    expect(result.stderr).toBe("[reins] timed out after 300 ms: process group killed\n");
    expect(await exits(Number(readFileSync(join(dir, "child.pid"), "utf8")), 2_000)).toBe(true);
  });

  it("stops a hung agent (no output for the idle time) long before its time is up, and calls the run transient", async () => {
    const result = await commandRunner("echo started; sleep 30 & echo $! > child.pid; wait").run(
      request({ timeoutMs: 60_000, idleMs: 300 }),
    );
    expect(result.outcome).toBe("transient");
    expect(result.exitCode).toBeNull();
    expect(result.raw).toBe("started\n");
    expect(result.stderr).toBe("[reins] timed out: no output for 300 ms (hung): process group killed\n");
    expect(await exits(Number(readFileSync(join(dir, "child.pid"), "utf8")), 2_000)).toBe(true);
  });

  it("lets an agent that keeps printing, on stdout or stderr, run past the idle time", async () => {
    // Twelve lines 100 ms apart: 1.2 s in all, against an idle time of 400 ms.
    const script =
      'i=0; while [ $i -lt 12 ]; do i=$((i+1)); echo "step $i" >&$((1 + i % 2)); sleep 0.1; done; echo done';
    const result = await commandRunner(script).run(request({ idleMs: 400 }));
    expect(result).toMatchObject({ outcome: "ok", exitCode: 0 });
    expect(result.raw.trim().split("\n").at(-1)).toBe("done");
  });

  it("kills what the program left running when it exits", async () => {
    const result = await commandRunner("sleep 30 > /dev/null 2>&1 & echo $! > child.pid; echo bye").run(
      request(),
    );
    expect(result).toMatchObject({ outcome: "ok", summary: "bye" });
    expect(await exits(Number(readFileSync(join(dir, "child.pid"), "utf8")), 2_000)).toBe(true);
  });

  it("stops on abort (Ctrl-C)", async () => {
    const controller = new AbortController();
    const running = commandRunner("echo started; sleep 30").run(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 200);
    const result = await running;
    expect(result).toMatchObject({ outcome: "transient", exitCode: null });
    expect(result.stderr).toContain("[reins] aborted");
  });

  it("keeps the head and the tail of a huge stdout and the last 64 KB of stderr", async () => {
    // 12 MB of stdout in 1 KB lines, then a last line; 1 MB of stderr, then a last line.
    const script = [
      "head -c 12582912 /dev/zero | tr '\\0' 'x' | fold -w 1023",
      "echo LAST-LINE",
      "head -c 1048576 /dev/zero | tr '\\0' 'e' | fold -w 1023 >&2",
      "echo STDERR-END >&2",
    ].join("\n");
    const result = await commandRunner(script).run(request({ timeoutMs: 20_000 }));
    expect(result.outcome).toBe("ok");
    expect(result.raw.length).toBeLessThanOrEqual(8 * 1024 * 1024 + 100);
    expect(result.raw.length).toBeGreaterThan(8 * 1024 * 1024 - 100);
    expect(result.raw.startsWith("xxxx")).toBe(true);
    expect(result.raw).toMatch(/\n\[… \d+ bytes cut\]\n/);
    expect(result.raw.endsWith("LAST-LINE\n")).toBe(true);
    expect(result.stderr.length).toBeLessThanOrEqual(64 * 1024 + 40);
    expect(result.stderr.startsWith("[… ")).toBe(true);
    expect(result.stderr.endsWith("STDERR-END\n")).toBe(true);
    expect(result.summary).toBe(
      "LAST-LINE".padStart(2_000, "x").slice(-2_000).trim() === "" ? "" : result.summary,
    );
  });
});

describe("parseCommand", () => {
  it("calls a killed run transient and a usage line without turns one turn", () => {
    expect(parseCommand("", null, "")).toMatchObject({ outcome: "transient", summary: "killed" });
    expect(parseCommand('{"reins": {"costUsd": 1.5}}\n', 0, "")).toMatchObject({
      turns: 1,
      tokens: 0,
      costUsd: 1.5,
      summary: "",
    });
  });
});
