/** A Codex home of the run's own, the user's with reins' hooks added and trusted, so a driven Codex runs them. */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { stringify } from "smol-toml";
import { reinsDir } from "../base/config/reins-dir.js";
import { ReinsError } from "../base/core/errors.js";
import { initAgent, isReinsHook, readSettings } from "./agent-hooks.js";
import { codexHookSlots, codexTrustChanges, codexTrustedHashes, realPath } from "./trust.js";
import { readToml, tomlSet } from "./toml-lines.js";
import { hasReinsHooks, drivenHookOptions } from "./driven-hooks.js";

/*
 * Codex (0.169.0) reads its hooks from `$CODEX_HOME/hooks.json` (and the project's `.codex/hooks.json`) and
 * runs one only when `[hooks.state."<real path of that file>:<event>:<group>:<hook>"] trusted_hash` in
 * `$CODEX_HOME/config.toml` is the hook's hash (see install/trust.ts). A run cannot add hooks to the user's
 * home or the project without writing their files, so it gives Codex a home of its own: the two files
 * Codex keys trust by are the run's copies, and every other entry (auth.json, sessions, logs, the state
 * database) is a link to the user's own.
 */

/** The entries of a Codex home the run writes its own copy of; every other one is a link to the user's. */
const COPIED = ["hooks.json", "config.toml"];

/**
 * The trust a copy of a Codex home must carry (key of `[hooks.state]` → trusted hash): every key the user
 * trusted for a hook of their `hooks.json` or `config.toml` under the copy's path instead (Codex keys trust
 * by the file's real path, so the same hook in the copy is another key), following a hook of the user's
 * that reins' hooks moved to another index, and reins' hooks of the copy's `hooks.json` by their hash. Pure.
 */
export function carriedTrust(options: {
  /** The user's `[hooks.state]` trust (see codexTrustedHashes). */
  trusted: ReadonlyMap<string, string>;
  /** The real paths of the user's Codex home and of the copy. */
  userHome: string;
  runHome: string;
  /** The user's `hooks.json` content (null when there is none) and the copy's, with reins' hooks. */
  userHooks: unknown;
  runHooks: unknown;
}): Map<string, string> {
  const { userHome, runHome } = options;
  const carried = new Map<string, string>();
  for (const [key, hash] of options.trusted)
    for (const file of COPIED) {
      const prefix = `${join(userHome, file)}:`;
      if (key.startsWith(prefix)) carried.set(`${join(runHome, file)}:${key.slice(prefix.length)}`, hash);
    }
  const hooksPath = join(runHome, "hooks.json");
  const ours = (hook: Record<string, unknown>) => isReinsHook(hook, "codex");
  const before = codexHookSlots(hooksPath, options.userHooks, ours);
  const after = codexHookSlots(hooksPath, options.runHooks, ours);
  for (const [key, hash] of codexTrustChanges(before, after, carried)) {
    if (hash === null) carried.delete(key);
    else carried.set(key, hash);
  }
  return carried;
}

/**
 * The run's `config.toml`: the user's text with `trust` added to `[hooks.state]`, line by line so that
 * everything else reads as the user wrote it; when the user's file is written in a form line edits cannot
 * extend (an inline `hooks` table, say), the same document written anew. Pure; throws on text that is not
 * TOML (Codex would not start with it either).
 */
export function runCodexConfig(userText: string, trust: ReadonlyMap<string, string>): string {
  const entries = [...trust].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let text = userText;
  for (const [key, hash] of entries) {
    const next = tomlSet(text, ["hooks", "state", key], "trusted_hash", hash);
    if ("conflict" in next) return rewritten(userText, entries);
    text = next.text;
  }
  return text;
}

/** The user's document with the trust set, written anew (its comments and layout are not kept). */
function rewritten(userText: string, entries: readonly [string, string][]): string {
  const doc = readToml(userText);
  const hooks = (doc.hooks ??= {}) as Record<string, unknown>;
  const state = (hooks.state ??= {}) as Record<string, Record<string, unknown>>;
  for (const [key, hash] of entries) state[key] = { ...state[key], trusted_hash: hash };
  return `${stringify(doc)}\n`;
}

function readJson(path: string): unknown {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as unknown) : null;
}

/**
 * Makes the run's Codex home, `.reins/run-hooks/codex-home`, from the user's (`userHome`: `$CODEX_HOME`,
 * else `~/.codex`): `hooks.json` is the user's with reins' hooks added as `reins init codex` adds them (none
 * when the project's `.codex/hooks.json` has them already: each call would be judged twice), `config.toml`
 * the user's with their trust carried over and reins' hooks trusted, and every other entry a link to the
 * user's own. The user's files and the project's are never written; made again, the home is the same.
 * Returns the environment that points Codex at it.
 */
export function codexRunEnv(root: string, bin: string, userHome: string): Record<string, string> {
  const dir = join(reinsDir(root), "run-hooks", "codex-home");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const home = realPath(dir);
  const entries = existsSync(userHome) ? readdirSync(userHome) : [];
  for (const name of entries) if (!COPIED.includes(name)) symlinkSync(join(userHome, name), join(home, name));

  const userHooksPath = join(userHome, "hooks.json");
  const hooksPath = join(home, "hooks.json");
  const userHooks = existsSync(userHooksPath) ? readSettings(userHooksPath) : null;
  if (userHooks !== null) writeFileSync(hooksPath, `${JSON.stringify(userHooks, null, 2)}\n`);
  if (!hasReinsHooks(join(root, ".codex", "hooks.json"), "codex"))
    initAgent("codex", { settingsPath: hooksPath, ...drivenHookOptions(root, bin) });

  const configPath = join(userHome, "config.toml");
  const userConfig = existsSync(configPath) ? readFileSync(configPath, "utf8") : "";
  let trusted: Map<string, string>;
  try {
    trusted = codexTrustedHashes(readToml(userConfig));
  } catch (error) {
    throw new ReinsError("usage", `${configPath} is not TOML (${(error as Error).message}): fix it first`);
  }
  const trust = carriedTrust({
    trusted,
    userHome: realPath(userHome),
    runHome: home,
    userHooks,
    runHooks: readJson(hooksPath),
  });
  writeFileSync(join(home, "config.toml"), runCodexConfig(userConfig, trust), { mode: 0o600 });
  return { CODEX_HOME: home };
}
