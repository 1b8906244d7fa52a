/**
 * `reins statusline`: the line Claude Code's `statusLine` command shows under the prompt, from the JSON it
 * pipes in: the session's spend against its budget, the breaker, the task a `reins run` drives, and "not
 * contained" when it is not (docs/statusline.md). It runs on every render: it reads the project's SQLite
 * store read-only and loads nothing of the CLI, the server or the policy schema.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { formatPercent, formatUsd } from "../base/core/format.js";
import type { Policy } from "../base/core/policy.js";
import type { State } from "../base/core/state.js";
import type { LogRecord } from "../base/core/batch.js";
import { scopeSummary, type ScopeSummary } from "../base/core/summary.js";
import { decisionFromJson, HEAD_SQL } from "../base/store/sqlite-rows.js";
import { containmentOf, runningBin } from "../base/config/boundary.js";
import { findRoot } from "../base/config/project-root.js";
import { isProject } from "../guard/hooks/user-hook.js";

/** What the line is made of; every part optional but the project's. */
export interface StatuslineView {
  /** The session's summary in the store, or null when reins recorded nothing of it yet. */
  summary: ScopeSummary | null;
  /** What Claude Code counts the session's cost at (`cost.total_cost_usd`), when it says. */
  costUsd?: number;
  /** The task of the `reins run` driving the session (`REINS_TASK`, its attempt and mode). */
  task?: { id: string; attempt?: string; mode?: string };
  /** False when the agent is not contained. @default true */
  contained?: boolean;
  /** Set outside any project: nothing is guarded. */
  unguarded?: boolean;
}

/** A count as a status line has room for: 950, 12.3k, 500k, 1.2M. */
export function compact(n: number): string {
  const [unit, size] = n >= 1e6 ? ["M", 1e6] : n >= 1e3 ? ["k", 1e3] : ["", 1];
  if (unit === "") return String(Math.round(n));
  const scaled = n / size;
  return `${scaled >= 100 ? Math.round(scaled) : Number(scaled.toFixed(1))}${unit}`;
}

/** The spend part: tokens (else the first limited resource) against the budget, and the session's cost. */
function spend(view: StatuslineView): string[] {
  const budget = view.summary?.budget ?? [];
  const tokens = budget.find((b) => b.resource === "tokens");
  const usd = budget.find((b) => b.resource === "usd");
  const parts: string[] = [];
  if (tokens !== undefined)
    parts.push(`${compact(tokens.used)}/${compact(tokens.limit)} tokens (${formatPercent(tokens.ratio)})`);
  if (usd !== undefined) parts.push(`${formatUsd(usd.used)}/${formatUsd(usd.limit)}`);
  else if (view.costUsd !== undefined && Number.isFinite(view.costUsd)) parts.push(formatUsd(view.costUsd));
  return parts;
}

/** The line as Claude Code shows it: `reins · <spend> · <breaker> · task <id> · not contained`. */
export function statuslineText(view: StatuslineView): string {
  if (view.unguarded === true) return "reins: not guarding (no git repository here)";
  const parts: string[] = [];
  const summary = view.summary;
  if (summary === null) parts.push("guarding, nothing recorded yet");
  else {
    parts.push(...spend(view));
    if (summary.status === "paused") parts.push("budget PAUSED");
    else if (summary.status === "exhausted" || summary.status === "warning")
      parts.push(`budget ${summary.status}`);
    const breaker = summary.breaker.status;
    parts.push(
      breaker === "closed" ? "breaker closed" : `breaker ${breaker.toUpperCase().replace("_", "-")}`,
    );
  }
  if (view.task !== undefined) {
    const extra = [
      view.task.attempt !== undefined ? `attempt ${view.task.attempt}` : "",
      view.task.mode ?? "",
    ]
      .filter((s) => s !== "")
      .join(", ");
    parts.push(`task ${view.task.id}${extra !== "" ? ` (${extra})` : ""}`);
  }
  if (view.contained === false) parts.push("NOT CONTAINED");
  return `reins · ${parts.join(" · ")}`;
}

/** The fields of Claude Code's status line input that the line reads. */
interface StatuslineInput {
  session_id?: unknown;
  cwd?: unknown;
  workspace?: { project_dir?: unknown; current_dir?: unknown };
  cost?: { total_cost_usd?: unknown };
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * The session's state as the store holds it, read-only: its snapshot and the records after it replayed
 * under the snapshot's policy. Null when the store or the session is not there.
 */
export async function readSession(
  root: string,
  session: string,
): Promise<{ state: State; policy: Policy } | null> {
  const file = join(root, ".reins", "reins.db");
  if (!existsSync(file)) return null;
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 200 });
  try {
    const scope = `session:${session}`;
    const head = db
      .prepare<[string], { seq: number; state: string; policy: string | null }>(HEAD_SQL)
      .get(scope);
    if (head === undefined || head.policy === null) return null;
    const snapshot = JSON.parse(head.state) as State;
    const policy = JSON.parse(head.policy) as Policy;
    const tail =
      head.seq > snapshot.seq
        ? db
            .prepare<[string, number], { seq: number; event: string; decision: string }>(
              "SELECT seq, event, decision FROM events WHERE scope = ? AND seq >= ? ORDER BY seq",
            )
            .all(scope, snapshot.seq)
            .map((r) => ({
              event: JSON.parse(r.event) as LogRecord["event"],
              decision: decisionFromJson(r.seq, r.decision),
            }))
        : [];
    if (tail.length === 0) return { state: snapshot, policy };
    // Replaying the records after the snapshot needs the engine: loaded only then.
    const { rebuild } = await import("../base/core/snapshot.js");
    return { state: rebuild(scope, snapshot, tail, policy), policy };
  } finally {
    db.close();
  }
}

/** The view of the session Claude Code's input names, in the project it runs in, with `env`'s run task. */
export async function statuslineView(
  raw: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<StatuslineView> {
  let input: StatuslineInput = {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed !== null && typeof parsed === "object") input = parsed;
  } catch {
    // not Claude Code's JSON: the line says what it can without a session
  }
  const dir = text(input.workspace?.project_dir) ?? text(env.CLAUDE_PROJECT_DIR) ?? text(input.cwd) ?? cwd;
  const root = findRoot(dir);
  const view: StatuslineView = { summary: null };
  const cost = input.cost?.total_cost_usd;
  if (typeof cost === "number") view.costUsd = cost;
  const task = text(env.REINS_TASK);
  if (task !== undefined) {
    const attempt = text(env.REINS_ATTEMPT);
    const mode = text(env.REINS_MODE);
    view.task = {
      id: task,
      ...(attempt !== undefined ? { attempt } : {}),
      ...(mode !== undefined ? { mode } : {}),
    };
  }
  if (!isProject(root)) return { ...view, unguarded: true };
  const session = text(input.session_id);
  const read = session !== undefined ? await readSession(root, session) : null;
  if (read !== null) view.summary = scopeSummary(read.state, read.policy);
  view.contained = containmentOf("claude", root, env, runningBin()).contained;
  return view;
}

/**
 * Runs the user's own status line command (`compose`) with the same input and returns its first line, or ""
 * when it fails: theirs first, then reins' part.
 */
export function theirLine(command: string, raw: string, env: NodeJS.ProcessEnv): string {
  // A command that exits without reading its input makes the write fail (EPIPE): what it printed still counts.
  const result = spawnSync("/bin/sh", ["-c", command], {
    input: raw,
    env,
    encoding: "utf8",
    timeout: 5_000,
    stdio: ["pipe", "pipe", "ignore"],
  });
  return result.status === 0 ? (result.stdout.split("\n")[0] ?? "") : "";
}

/** The whole line for one render: theirs (when composed) and reins'. Never throws. */
export async function statusline(
  raw: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  compose?: string,
): Promise<string> {
  let ours: string;
  try {
    ours = statuslineText(await statuslineView(raw, env, cwd));
  } catch (error) {
    ours = `reins: status unavailable (${(error as Error).message.split("\n")[0] ?? ""})`;
  }
  if (compose === undefined) return ours;
  const theirs = theirLine(compose, raw, env);
  return theirs === "" ? ours : `${theirs} │ ${ours}`;
}

/** Reads all of stdin synchronously (Claude Code writes its JSON and closes the pipe). */
function readStdin(): string {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

/**
 * `reins statusline [--compose <base64>]` as bin/reins.js runs it straight away, without the CLI framework:
 * it runs on every render of Claude Code's status line. Always exits 0 (a failing command blanks the line).
 */
export async function statuslineMain(args: readonly string[]): Promise<number> {
  const at = args.indexOf("--compose");
  const encoded = at >= 0 ? args[at + 1] : undefined;
  const compose = encoded !== undefined ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
  process.stdout.write(`${await statusline(readStdin(), process.env, process.cwd(), compose)}\n`);
  return 0;
}
