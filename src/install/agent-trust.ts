/** `reins init`'s part in the agents' own trust stores: Codex and Gemini CLI made to trust what it installed, and undone. */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { reinsDir } from "../base/config/reins-dir.js";
import {
  codexHome,
  codexHookSlots,
  codexProjectTrust,
  codexTrustChanges,
  codexTrustedHashes,
  geminiFolderTrust,
  geminiTrustedFoldersPath,
  readTrustRecord,
  readTrustedFolders,
  realPath,
  writeAtomically,
  writeTrustRecord,
} from "./trust.js";
import { readToml, tomlGet, tomlHeader, tomlLine, tomlSet, tomlUnset } from "./toml-lines.js";
import { isReinsHook } from "./agent-hooks.js";

/** The env variable that keeps `reins init` out of the agents' own trust settings, like `--no-trust`. */
export const NO_TRUST_ENV = "REINS_INIT_NO_TRUST";

const CODEX_MARKER =
  "# added by `reins init codex`, which runs no hooks in an untrusted project; `--uninstall` removes it";

/** One change to a TOML table's key: a value to set, or null to remove it. */
type TomlEdit = { path: string[]; key: string; value: string | null; marker?: string };

/** What `reins init` did to an agent's own trust settings (lines to print), and whether it failed. */
export interface TrustOutcome {
  said: string[];
  /** The agent will not run reins' hooks: trust could not be written, or the person distrusts the folder. */
  failed: boolean;
}

/**
 * Makes the agent trust what `initAgent` just wrote, as far as the agent asks for trust: Codex trusts
 * the project (`[projects]`, project installs) and exactly reins' hooks by hash (`[hooks.state]`) in
 * `$CODEX_HOME/config.toml`; Gemini CLI trusts the project folder (`trustedFolders.json`). Merges with what
 * is there, is idempotent, and with `uninstall` removes exactly what it added (a project's trust only when
 * `.reins/agent-trust.json` says reins added it). With `write` false, or when the file cannot be written,
 * it changes nothing and says what to add. `before` is the hook file's content before `initAgent`.
 */
export function trustAgentHooks(
  agent: string,
  options: {
    root: string;
    home: string;
    env: NodeJS.ProcessEnv;
    settingsPath: string;
    before: unknown;
    user: boolean;
    uninstall: boolean;
    write: boolean;
  },
): TrustOutcome {
  if (agent === "codex") return trustCodex(options);
  if (agent === "gemini") return trustGemini(options);
  return { said: [], failed: false };
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    return null;
  }
}

function trustCodex(o: Parameters<typeof trustAgentHooks>[1]): TrustOutcome {
  const config = join(codexHome(o.env, o.home), "config.toml");
  // Codex keys hooks by the real path of their file, as it finds it from its working folder.
  const keyPath = join(realPath(dirname(o.settingsPath)), basename(o.settingsPath));
  const ours = (h: Record<string, unknown>) => isReinsHook(h, "codex");
  const before = codexHookSlots(keyPath, o.before, ours);
  const after = codexHookSlots(keyPath, readJson(o.settingsPath), ours);
  let text = existsSync(config) ? readFileSync(config, "utf8") : "";
  let doc: ReturnType<typeof readToml>;
  try {
    doc = readToml(text);
  } catch (error) {
    return codexByHand(o, config, [], `reins cannot read ${config} (${(error as Error).message})`);
  }
  const edits: TomlEdit[] = [...codexTrustChanges(before, after, codexTrustedHashes(doc))].map(
    ([key, hash]) => ({ path: ["hooks", "state", key], key: "trusted_hash", value: hash }),
  );
  const dir = o.user ? null : reinsDir(o.root);
  const record = dir !== null ? readTrustRecord(dir) : {};
  const project = realPath(o.root);
  const said: string[] = [];
  let failed = false;
  if (!o.user && !o.uninstall) {
    const level = codexProjectTrust(doc, o.root);
    if (level === "untrusted") {
      said.push(
        `Codex marks ${project} untrusted in ${config}, so it runs none of this project's hooks; reins left your decision as it is. Set its trust_level to "trusted", or install with --user.`,
      );
      failed = true;
    } else if (level !== "trusted") {
      edits.unshift({
        path: ["projects", project],
        key: "trust_level",
        value: "trusted",
        marker: CODEX_MARKER,
      });
      record.codex = { config, project };
    }
  }
  const added = record.codex;
  if (o.uninstall && added !== undefined && added.config === config) {
    // Only the trust reins wrote: a person who since marked the project untrusted keeps that.
    if (tomlGet(doc, ["projects", added.project, "trust_level"]) === "trusted")
      edits.unshift({
        path: ["projects", added.project],
        key: "trust_level",
        value: null,
        marker: CODEX_MARKER,
      });
    delete record.codex;
  }
  if (edits.length === 0) {
    if (dir !== null && o.uninstall) writeTrustRecord(dir, record);
    if (!o.uninstall && !failed)
      said.push(`Codex already trusts ${o.user ? "" : "this project and "}reins' hooks (${config})`);
    return { said, failed };
  }
  if (!o.write)
    return codexByHand(
      o,
      config,
      edits,
      `reins did not change ${config} (--no-trust or ${NO_TRUST_ENV}=1)`,
      said,
      failed,
    );
  for (const edit of edits) {
    const next =
      edit.value === null
        ? tomlUnset(text, edit.path, edit.key, edit.marker)
        : tomlSet(text, edit.path, edit.key, edit.value, edit.marker);
    if ("conflict" in next)
      return codexByHand(o, config, edits, `reins did not change ${config}: ${next.conflict}`, said, failed);
    text = next.text;
  }
  try {
    writeAtomically(config, text);
  } catch (error) {
    return codexByHand(
      o,
      config,
      edits,
      `reins could not write ${config} (${(error as Error).message})`,
      said,
      failed,
    );
  }
  if (dir !== null) writeTrustRecord(dir, record);
  const hooks = edits.filter((e) => e.path[0] === "hooks" && (e.value === null) === o.uninstall).length;
  const projectEdit = edits.some((e) => e.path[0] === "projects");
  said.push(
    o.uninstall
      ? `removed reins' trust from ${config}: ${[projectEdit ? "the project's" : "", hooks > 0 ? `${hooks} hook hash(es)` : ""].filter(Boolean).join(" and ")}`
      : `trusted ${[projectEdit ? "this project" : "", `${hooks} hook(s)`].filter(Boolean).join(" and ")} in ${config}: Codex runs no hook it has not trusted`,
  );
  return { said, failed };
}

/** Says what to add to (or remove from) Codex's config by hand; fails unless the person asked for it. */
function codexByHand(
  o: { uninstall: boolean; write: boolean },
  config: string,
  edits: readonly TomlEdit[],
  why: string,
  said: string[] = [],
  failed = false,
): TrustOutcome {
  const lines = edits.map((e) =>
    e.value === null
      ? `${tomlHeader(e.path)} ${e.key}`
      : `${tomlHeader(e.path)}\n${tomlLine(e.key, e.value)}`,
  );
  said.push(
    o.uninstall
      ? `${why}. Remove reins' trust from it by hand:\n${lines.join("\n")}`
      : `${why}. Codex runs a project's hooks only when it trusts the project and each hook: add this to it (or trust reins' hooks in Codex's /hooks):\n\n${lines.join("\n\n")}\n`,
  );
  return { said, failed: failed || o.write };
}

function trustGemini(o: Parameters<typeof trustAgentHooks>[1]): TrustOutcome {
  if (o.user)
    return {
      said: [
        "Gemini CLI runs hooks only in a trusted folder: trust each project (`reins init gemini` there, or Gemini's /permissions)",
      ],
      failed: false,
    };
  const file = geminiTrustedFoldersPath(o.env, o.home);
  const folder = realPath(o.root);
  const dir = reinsDir(o.root);
  const record = readTrustRecord(dir);
  const byHand = (why: string): TrustOutcome => ({
    said: [
      o.uninstall
        ? `${why}. Remove "${folder}" from it by hand.`
        : `${why}. Gemini CLI loads this project's settings, reins' hooks among them, only in a trusted folder (also under --skip-trust): add "${folder}": "TRUST_FOLDER" to it, or run Gemini with GEMINI_CLI_TRUST_WORKSPACE=true.`,
    ],
    failed: o.write,
  });
  let folders: ReturnType<typeof readTrustedFolders>;
  try {
    folders = readTrustedFolders(file);
  } catch (error) {
    return byHand(`reins cannot read ${file} (${(error as Error).message})`);
  }
  const { rules, plain } = folders;
  const data = folders.document ?? {};
  // What reins says when it may not rewrite the file.
  const unchanged = `reins did not change ${file}${o.write ? ": it has comments, which a rewrite would lose" : ` (--no-trust or ${NO_TRUST_ENV}=1)`}`;
  if (o.uninstall) {
    const added = record.gemini;
    if (added === undefined || added.file !== file) return { said: [], failed: false };
    if (rules[added.folder] !== "TRUST_FOLDER") {
      // A person changed that rule since: it is theirs now.
      delete record.gemini;
      writeTrustRecord(dir, record);
      return { said: [], failed: false };
    }
    if (!o.write || !plain) return byHand(unchanged);
    delete data[added.folder];
  } else {
    const trusted = geminiFolderTrust(rules, folder);
    if (trusted === true) return { said: [`Gemini CLI already trusts ${folder} (${file})`], failed: false };
    if (trusted === false)
      return {
        said: [
          `${file} says not to trust ${folder}, so Gemini CLI loads none of this project's settings and runs none of reins' hooks; reins left your decision as it is.`,
        ],
        failed: true,
      };
    if (!o.write || !plain) return byHand(unchanged);
    data[folder] = "TRUST_FOLDER";
  }
  try {
    writeAtomically(file, JSON.stringify(data, null, 2));
  } catch (error) {
    return byHand(`reins could not write ${file} (${(error as Error).message})`);
  }
  if (o.uninstall) delete record.gemini;
  else record.gemini = { file, folder };
  writeTrustRecord(dir, record);
  return {
    said: [
      o.uninstall
        ? `removed ${folder} from Gemini CLI's trusted folders (${file})`
        : `trusted ${folder} in ${file}: Gemini CLI loads a project's settings, and so reins' hooks, only in a trusted folder`,
    ],
    failed: false,
  };
}
