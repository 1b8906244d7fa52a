/** Tests of running one shell command for the loop: bounded output, timeouts, process groups. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exits } from "#test/processes.js";
import { MAX_COMMAND_OUTPUT, runCommand } from "./run-command.js";

const dir = mkdtempSync(join(tmpdir(), "reins-command-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("runCommand", () => {
  it("runs with sh -c in cwd, interleaving stdout and stderr in order", async () => {
    const result = await runCommand("pwd; echo out; echo err >&2; echo out2; exit 3", {
      cwd: dir,
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ exitCode: 3, timedOut: false, aborted: false });
    expect(result.output).toBe(`${dir}\nout\nerr\nout2\n`);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("adds env to the inherited environment", async () => {
    const result = await runCommand('echo "$REINS_X:${PATH:+path}"', {
      cwd: dir,
      env: { REINS_X: "1" },
      timeoutMs: 5_000,
    });
    expect(result.output).toBe("1:path\n");
  });

  it("treats a timeout past setTimeout's range as no timeout", async () => {
    const result = await runCommand("sleep 0.1; echo done", { cwd: dir, timeoutMs: 1e12 });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: "done\n" });
  });

  it("measures with the clock it is given", async () => {
    let t = 1_000;
    const result = await runCommand("true", { cwd: dir, timeoutMs: 5_000, clock: () => (t += 250) });
    expect(result.durationMs).toBe(250);
  });

  it("keeps the last 64 KB of output and says how many bytes were cut", async () => {
    // 200,000 bytes of `a` lines, then a marker.
    const result = await runCommand("head -c 200000 /dev/zero | tr '\\0' a; echo; echo THE-END", {
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result.exitCode).toBe(0);
    const [head, ...rest] = result.output.split("\n");
    const cut = Number(/^\[… (\d+) bytes cut\]$/.exec(head ?? "")?.[1]);
    expect(cut + Buffer.byteLength(rest.join("\n"))).toBe(200_000 + 1 + 8);
    expect(Buffer.byteLength(rest.join("\n"))).toBe(MAX_COMMAND_OUTPUT);
    expect(result.output.endsWith("THE-END\n")).toBe(true);
  });

  it("cuts on a character boundary", async () => {
    const result = await runCommand("for i in $(seq 1 30000); do printf 'é'; done", {
      cwd: dir,
      timeoutMs: 10_000,
      maxOutput: 1001,
    });
    expect(result.output).not.toContain("\uFFFD");
    expect(result.output).toMatch(/^\[… \d+ bytes cut\]\né+$/);
  });

  it("on timeout kills the whole process group, grandchildren included", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const started = Date.now();
    const result = await runCommand(`sh -c 'sleep 30 & echo $! > ${pidFile}; wait'; echo never`, {
      cwd: dir,
      timeoutMs: 300,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ exitCode: null, timedOut: true, aborted: false });
    expect(result.output).not.toContain("never");
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(await exits(pid)).toBe(true);
  });

  it("kills a grandchild that ignores SIGTERM", async () => {
    const pidFile = join(dir, "stubborn.pid");
    const result = await runCommand(`sh -c 'trap "" TERM; sleep 30 & echo $! > ${pidFile}; wait'`, {
      cwd: dir,
      timeoutMs: 300,
    });
    expect(result.timedOut).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(await exits(pid)).toBe(true);
  });

  it("on abort kills the group and says it was aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const result = await runCommand("echo started; sleep 30", {
      cwd: dir,
      timeoutMs: 30_000,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ exitCode: null, timedOut: false, aborted: true });
    expect(result.output).toBe("started\n");
  });

  it("does not start when already aborted", async () => {
    const result = await runCommand("touch should-not-exist", {
      cwd: dir,
      timeoutMs: 5_000,
      signal: AbortSignal.abort(),
    });
    expect(result.aborted).toBe(true);
    expect(() => readFileSync(join(dir, "should-not-exist"))).toThrow();
  });

  it("returns when the shell exits even if a background job holds the output pipe, and ends the job", async () => {
    const pidFile = join(dir, "background.pid");
    const started = Date.now();
    const result = await runCommand(`sleep 30 & echo $! > ${pidFile}; echo done`, {
      cwd: dir,
      timeoutMs: 20_000,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: "done\n" });
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(await exits(pid)).toBe(true);
  });

  it("resolves with the reason when the command cannot start", async () => {
    const result = await runCommand("true", { cwd: join(dir, "missing"), timeoutMs: 5_000 });
    expect(result.exitCode).toBeNull();
    expect(result.output).toMatch(/^cannot run the command: .*ENOENT/);
  });
});
