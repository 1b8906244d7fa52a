/**
 * Two projects of one user, served by one real hook daemon (signed calls over its socket) into their own
 * SQLite stores, with a state folder and a runtime folder of their own: project `alpha` has a session at
 * work whose tokens have no price, project `beta` a session whose breaker opened on five identical failing
 * calls, with a priced usage. For the all-projects view's tests.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPolicy } from "../../src/base/core/policy.js";
import { REINS_BIN } from "../../src/base/config/package-info.js";
import { startHookDaemon, type HookDaemon } from "../../src/guard/daemon/hook-daemon.js";
import { encodeProjectEnv } from "../../src/guard/daemon/protocol.js";
import { hookSecret } from "../../src/base/config/hook-secret.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";
import { daemonCall } from "./daemon-call.js";

export interface TwoProjects {
  alpha: string;
  beta: string;
  /** The user's variables for a reins process that should see these projects and this daemon. */
  env: Record<string, string>;
  daemon: HookDaemon;
  close(): Promise<void>;
}

const call = (root: string, event: string, session: string, extra: object = {}) => ({
  session_id: session,
  hook_event_name: event,
  cwd: root,
  ...extra,
});

/** Adds one usage record to a project's store, as another process (a second connection) would. */
async function addUsage(root: string, scope: string, tokens: number, costUsd: number): Promise<void> {
  const store = new SqliteStore(join(root, ".reins", "reins.db"));
  try {
    await store.append(
      scope,
      [{ kind: "usage.recorded", at: Date.now(), scope, id: `u-${scope}`, inputTokens: tokens, costUsd }],
      defaultPolicy,
    );
  } finally {
    await store.close();
  }
}

/** Sets the two projects up and leaves the daemon running; `close` stops it and removes every folder. */
export async function twoProjects(): Promise<TwoProjects> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-all-")));
  const [alpha, beta, state, runtime] = ["alpha", "beta", "state", "run"].map((n) => join(base, n));
  const { mkdirSync } = await import("node:fs");
  for (const dir of [alpha!, beta!, state!]) mkdirSync(dir, { recursive: true });
  mkdirSync(runtime!, { recursive: true, mode: 0o700 });
  for (const root of [alpha!, beta!]) writeFileSync(join(root, "reins.config.json"), "{}\n");
  const started = await startHookDaemon({
    socket: join(runtime!, "d.sock"),
    bin: REINS_BIN,
    version: "test",
  });
  if (started.kind !== "listening") throw new Error("another daemon answers on the test's socket");
  const daemon = started.daemon;
  // The hooks' variables name the state folder, as a user's would (the daemon records each project there).
  const envHeader = encodeProjectEnv({ REINS_STATE_DIR: state });
  const send = (root: string, body: object) =>
    daemonCall(daemon.status().socket, body, { root, secret: hookSecret(root), env: envHeader });
  await send(alpha!, call(alpha!, "SessionStart", "alpha-1", { source: "startup" }));
  await send(
    alpha!,
    call(alpha!, "PreToolUse", "alpha-1", { tool_name: "Read", tool_input: { file_path: "a.txt" } }),
  );
  await send(beta!, call(beta!, "SessionStart", "beta-1", { source: "startup" }));
  const failing = call(beta!, "PreToolUse", "beta-1", {
    tool_name: "Bash",
    tool_input: { command: "node migrate.js" },
  });
  for (let i = 0; i < 5; i++) {
    await send(beta!, failing);
    if (i < 4)
      await send(beta!, {
        ...failing,
        hook_event_name: "PostToolUseFailure",
        error: "Exit code 1\nECONNREFUSED",
      });
  }
  await addUsage(alpha!, "session:alpha-1", 1_200, 0);
  await addUsage(beta!, "session:beta-1", 3_400, 0.25);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: base,
    REINS_STATE_DIR: state!,
    REINS_RUNTIME_DIR: runtime!,
  };
  return {
    alpha: alpha!,
    beta: beta!,
    env,
    daemon,
    close: async () => {
      await daemon.close("test over");
      rmSync(base, { recursive: true, force: true });
    },
  };
}
