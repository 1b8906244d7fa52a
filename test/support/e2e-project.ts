import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";
import { stopServer, stopHookDaemons } from "./processes.js";

/**
 * The throwaway project of an end-to-end test with a real agent CLI: made in `beforeEach`, read back
 * through reins' store, stopped and removed in `afterEach`.
 */

/** A test's folder: `<root>/project`, the agent's working directory, and `<root>/home`, its HOME. */
export interface E2eProject {
  /** A real path (no symlink), as the agents report their cwd. */
  root: string;
  project: string;
  home: string;
}

/** A script that fails as a database that is down does, the same way every time. */
export const failJs = "console.error('Error: connect ECONNREFUSED 127.0.0.1:5432'); process.exit(1);\n";

/** A `package.json` whose `npm test` runs `node test.js`, with `fields` added (`name` defaults to `demo`). */
export function npmTestPackage(fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ name: "demo", private: true, ...fields, scripts: { test: "node test.js" } });
}

/**
 * Makes `reins-<name>-e2e-*` under the OS temp dir with an empty `project` and `home`, and writes an empty
 * `reins.config.json` and `files` (name to content) into the project.
 */
export function e2eProject(name: string, files: Record<string, string> = {}): E2eProject {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `reins-${name}-e2e-`)));
  const project = join(root, "project");
  const home = join(root, "home");
  mkdirSync(project);
  mkdirSync(home);
  writeFileSync(join(project, "reins.config.json"), "{}");
  for (const [file, content] of Object.entries(files)) writeFileSync(join(project, file), content);
  return { root, project, home };
}

/** The project of the running test and the fake model API it talks to. */
export interface E2eEach<Fake> extends E2eProject {
  /** Set by the test; closed after it. */
  fake: Fake | undefined;
}

/**
 * A fresh `e2eProject(name, files)` for each test of the file, made in `beforeEach` (before the file's own
 * hooks) and removed in `afterEach` with the fake model the test left in `fake` closed. Read its fields
 * inside tests and hooks: they change with every test.
 */
export function e2eEach<Fake extends { close(): Promise<void> }>(
  name: string,
  files: Record<string, string> = {},
): E2eEach<Fake> {
  const each: E2eEach<Fake> = { root: "", project: "", home: "", fake: undefined };
  beforeEach(() => {
    Object.assign(each, e2eProject(name, files));
  });
  afterEach(async () => {
    await each.fake?.close();
    each.fake = undefined;
    await removeE2eProject(each.root);
  });
  return each;
}

/**
 * Stops the processes the test's hooks started (the project's server, the user's hook daemon of the test's
 * HOME), if any, then removes the whole folder.
 */
export async function removeE2eProject(root: string): Promise<void> {
  await stopServer(join(root, "project"));
  await stopHookDaemons({ HOME: join(root, "home") });
  rmSync(root, { recursive: true, force: true });
}

/** `reins init <args>`, in-process in the project with its HOME; throws what it printed unless it exits 0. */
export async function initReins(
  { project, home }: { project: string; home: string },
  args: readonly string[],
): Promise<void> {
  const io = memoryIo({ cwd: project, env: { HOME: home } });
  const code = await run(["init", ...args], io);
  if (code !== 0) throw new Error(`reins init ${args.join(" ")} exited ${code}: ${io.err.join("")}`);
}

/** What reins recorded for `session:<sessionId>` in the project's store: its event log and its state. */
export async function recorded(project: string, sessionId: string) {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    return {
      log: await store.events(`session:${sessionId}`),
      state: await store.state(`session:${sessionId}`),
    };
  } finally {
    await store.close();
  }
}
