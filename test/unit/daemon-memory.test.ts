/**
 * The hook daemon's memory bounded by a cap, not by the sessions it has served: with room for one session
 * state across all its projects, sessions taking turns evict each other on every call, and each is rebuilt
 * from its store (snapshot and log tail) to the same decisions as a daemon that keeps them all.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { REINS_BIN } from "../../src/base/config/package-info.js";
import { startHookDaemon, type HookDaemon } from "../../src/guard/daemon/hook-daemon.js";
import { hookSecret } from "../../src/base/config/hook-secret.js";
import { boundStoreMemory, cachedStates } from "../../src/base/store/state-cache.js";
import { daemonCall } from "#test/daemon-call.js";
import { failed, failing } from "#test/daemon-inputs.js";

const temps: string[] = [];
const temp = (prefix: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
};
const daemons: HookDaemon[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.close("test over")));
  boundStoreMemory({ states: Number.POSITIVE_INFINITY, pageCacheKib: null });
});
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function project(): string {
  const dir = temp("reins-mem-project-");
  writeFileSync(join(dir, "reins.config.json"), "{}");
  hookSecret(dir);
  return dir;
}

/**
 * Three sessions in two projects, taking turns call by call: six identical failing commands each, every
 * failure reported. The permission decisions of every session's six requests, and the most states the
 * daemon held in memory after any call.
 */
async function loops(states: number) {
  const started = await startHookDaemon({
    socket: join(temp("reins-mem-rt-"), "d.sock"),
    bin: REINS_BIN,
    version: "test",
    http: false,
    states,
  });
  if (started.kind !== "listening") throw new Error("another daemon answers");
  daemons.push(started.daemon);
  const socket = started.daemon.status().socket;
  const [a, b] = [project(), project()];
  const sessions = [
    { root: a, id: "one" },
    { root: b, id: "two" },
    { root: a, id: "three" },
  ];
  const decisions = new Map<string, string[]>(sessions.map((s) => [s.id, []]));
  let held = 0;
  for (let i = 0; i < 6; i++)
    for (const { root, id } of sessions) {
      const secret = hookSecret(root);
      const answer = await daemonCall<{ hookSpecificOutput?: { permissionDecision?: string } }>(
        socket,
        failing(id, root),
        { root, secret },
      );
      expect(answer.status).toBe(200);
      decisions.get(id)!.push(answer.json.hookSpecificOutput?.permissionDecision ?? "allow");
      held = Math.max(held, cachedStates());
      expect((await daemonCall(socket, failed(id, root), { root, secret })).status).toBe(200);
      held = Math.max(held, cachedStates());
    }
  await started.daemon.close("test over");
  return { decisions, held };
}

describe("the hook daemon's memory", () => {
  it("rebuilds a session evicted mid-loop from its store: its loop is still denied, as with no bound", async () => {
    const bounded = await loops(1);
    expect(bounded.held).toBe(1);
    const unbounded = await loops(1_000_000);
    expect(unbounded.held).toBeGreaterThan(1);
    for (const id of ["one", "two", "three"]) {
      const answers = bounded.decisions.get(id)!;
      expect(answers[0]).toBe("allow");
      expect(answers[5]).toBe("deny");
      expect(answers).toEqual(unbounded.decisions.get(id));
    }
  });
});
