/** Loads agents' own logs from a file or a folder, each format told from its content. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { ReinsError } from "../../base/core/errors.js";
import { isClaudeTranscript, readClaudeTranscript } from "./claude-transcript.js";
import { isCodexRollout, readCodexRollout } from "./codex-rollout.js";
import { isGeminiChat, readGeminiChat } from "./gemini-chat.js";
import { isMiniSweAgent, readMiniSweAgent } from "./mini-swe-agent.js";
import type { LoggedRun } from "./run.js";
import { isSweAgent, readSweAgent, sweAgentMismatch } from "./swe-agent.js";

/**
 * Reads agents' own logs from disk: one file, or every log file under a folder. The format is told from
 * the content, so names and folders are free (gzip is unpacked first).
 */

/** Files that may hold a log: JSON, JSON Lines, SWE-agent's `.traj`, each possibly gzipped. */
const LOG_FILE = /\.(jsonl|json|traj)(\.gz)?$/;

/** Largest log read, unpacked: a log bigger than this is refused with a message rather than read. */
export const MAX_LOG_BYTES = 512 * 1024 * 1024;

/** The run id a file name suggests: the name without its log extensions. */
function idOf(path: string): string {
  return basename(path).replace(/(\.traj)?\.(jsonl|json|traj)(\.gz)?$/, "");
}

function textOf(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new ReinsError(
      "invalid_log",
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_LOG_BYTES });
    } catch (error) {
      throw new ReinsError("invalid_log", `${path}: not a readable gzip file (${(error as Error).message})`);
    }
  }
  if (bytes.length > MAX_LOG_BYTES)
    throw new ReinsError("invalid_log", `${path}: over ${MAX_LOG_BYTES} bytes`);
  return bytes.toString("utf8");
}

/** Parses JSON Lines, skipping lines that do not parse (an agent may be writing the last one). */
export function jsonLines(text: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed[0] !== "{") continue;
    try {
      const value = JSON.parse(trimmed) as unknown;
      if (value !== null && typeof value === "object" && !Array.isArray(value))
        rows.push(value as Record<string, unknown>);
    } catch {
      // a torn or foreign line
    }
  }
  return rows;
}

/** Reads one log file into a run; throws a ReinsError naming the file when it is not a log reins reads. */
export function readLog(path: string): LoggedRun {
  const text = textOf(path);
  const id = idOf(path);
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    whole = undefined;
  }
  if (whole !== undefined) {
    if (isMiniSweAgent(whole)) return readMiniSweAgent(whole, path, id);
    if (isSweAgent(whole)) return readSweAgent(whole, path, id);
    if (isGeminiChat(whole)) return readGeminiChat(whole, path, id);
  }
  const rows = jsonLines(text);
  if (isCodexRollout(rows)) return readCodexRollout(rows, path, id);
  if (isClaudeTranscript(rows)) return readClaudeTranscript(rows, path, id);
  if (isGeminiChat(rows)) return readGeminiChat(rows, path, id);
  const why = whole === undefined ? null : mismatchOf(whole);
  throw new ReinsError(
    "invalid_log",
    `${path}: not a log reins reads (Claude Code transcript, Codex CLI rollout, Gemini CLI chat, mini-swe-agent or SWE-agent trajectory)${why !== null ? `: ${why}` : ""}`,
  );
}

/** For a JSON value that is close to a log reins reads, what it lacks; null when it is close to none. */
function mismatchOf(whole: unknown): string | null {
  if (whole === null || typeof whole !== "object" || Array.isArray(whole)) return null;
  const d = whole as Record<string, unknown>;
  if ("trajectory" in d || Array.isArray(d.history))
    return `as a SWE-agent trajectory, ${sweAgentMismatch(d) ?? "unread"}`;
  if (Array.isArray(d.messages))
    return "as a mini-swe-agent trajectory, no `trajectory_format` or `info.mini_version`; as a Gemini CLI chat, no `sessionId`";
  return null;
}

/** Every log file under `path` (or `path` itself when it is a file), sorted, at most `limit`. */
export function logFiles(path: string, limit = 100_000): string[] {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    throw new ReinsError(
      "invalid_log",
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  if (!stat.isDirectory()) return [path];
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 8 || found.length >= limit) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.isFile() && LOG_FILE.test(entry.name) && found.length < limit) found.push(full);
    }
  };
  walk(path, 0);
  return found;
}
