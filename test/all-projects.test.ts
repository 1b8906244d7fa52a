import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AllStatus } from "../src/guard/daemon/all-status.js";
import { execFile } from "node:child_process";
import { reinsBin } from "#test/processes.js";
import { twoProjects, type TwoProjects } from "#test/two-projects.js";

/**
 * `reins status --all`: every project of the user's at once, read by another process from each project's
 * own store, the hook daemon up and then down.
 */

let two: TwoProjects;

beforeAll(async () => {
  two = await twoProjects();
}, 30_000);

afterAll(async () => {
  await two?.close();
});

/** `node bin/reins.js <args>` in a process of its own, not blocking this one (whose daemon must answer it). */
function reins(args: string[], cwd = two.alpha): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [reinsBin, ...args],
      { cwd, env: two.env, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

const statusAll = async (json: boolean) => reins(["status", "--all", ...(json ? ["--json"] : [])]);

async function parsed(): Promise<AllStatus> {
  const ran = await statusAll(true);
  expect(ran.stderr).toBe("");
  expect(ran.code).toBe(0);
  return JSON.parse(ran.stdout) as AllStatus;
}

describe("reins status --all", () => {
  it("shows both projects from their stores, the stopped session with the command that releases its breaker", async () => {
    const status = await parsed();
    expect(status.daemon).toMatchObject({ running: true, projectsOpen: 2 });
    const alpha = status.projects.find((p) => p.root === two.alpha)!;
    const beta = status.projects.find((p) => p.root === two.beta)!;
    expect(alpha).toMatchObject({
      servedNow: true,
      problem: "",
      sessions: { total: 1, active: 1, stopped: 0 },
    });
    expect(alpha.sessions.latest[0]).toMatchObject({
      scope: "session:alpha-1",
      state: "active",
      agent: "claude",
    });
    // Tokens with no price: no cost, never "$0.00".
    expect(alpha.today).toMatchObject({ tokens: 1_200, usd: null });
    expect(Date.now() - alpha.sessions.latest[0]!.lastAt!).toBeLessThan(60_000);
    expect(beta.sessions.latest[0]).toMatchObject({
      scope: "session:beta-1",
      state: "stopped",
      why: "breaker open",
    });
    expect(beta.today.usd).toBe(0.25);
    expect(beta.breakers).toEqual([
      expect.objectContaining({
        scope: "session:beta-1",
        release: `reins -C ${two.beta} circuit reset session:beta-1 --reason "<why>"`,
      }),
    ]);
    expect(beta.alerts.length).toBeGreaterThan(0);

    const text = (await statusAll(false)).stdout;
    expect(text).toMatch(/^hook daemon: running \(pid \d+/);
    expect(text).toContain("stopped (breaker open)");
    expect(text).toContain("1,200 tokens, no price");
    expect(text).toContain(`release: reins -C ${two.beta} circuit reset session:beta-1`);
  });

  it("with the daemon down, lists the projects of its records and says the daemon is down", async () => {
    await two.daemon.close("test: the daemon goes down");
    const status = await parsed();
    expect(status.daemon).toMatchObject({ running: false });
    expect(status.projects.map((p) => p.root).sort()).toEqual([two.alpha, two.beta].sort());
    expect(status.projects.every((p) => !p.servedNow && p.servedAt !== null)).toBe(true);
    expect(status.projects.find((p) => p.root === two.beta)?.breakers).toHaveLength(1);
    expect((await statusAll(false)).stdout).toMatch(
      /^hook daemon: down; the projects below are those of reins' records in /,
    );

    // The release command it prints releases the breaker.
    const release = await reins([
      "-C",
      two.beta,
      "circuit",
      "reset",
      "session:beta-1",
      "--reason",
      "looked at it",
    ]);
    expect(release.stderr).toBe("");
    const after = (await parsed()).projects.find((p) => p.root === two.beta)!;
    expect(after.breakers).toEqual([]);
    expect(after.sessions.latest[0]?.state).toBe("active");
  });
});
