/**
 * Every project of the user's at once (`reins status --all`, `reins serve --all`): each one read from its
 * own store, as its policy names it, by the process that asks. Read-only: a project whose default store
 * was never made is reported as such, never created.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { loadPolicy } from "../../base/config/load-policy.js";
import type { KnownProject } from "../../base/config/project-registry.js";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import type { Store } from "../../base/core/store.js";
import { spendSince, tallyTokens } from "../../base/core/spend.js";
import { scopeSummary } from "../../base/core/summary.js";
import { policyFor } from "../../base/core/batch.js";
import { defaultStorePath, openStore } from "../../base/store/open.js";
import { redact } from "../../base/store/redact.js";

/** What a session is doing: going on, ended, or stopped until a person acts (breaker open, budget paused). */
export type SessionState = "active" | "ended" | "stopped";

/** One session of a project, as the all-projects view lists it. */
export interface SessionLine {
  scope: string;
  agent: string;
  state: SessionState;
  /** Why a stopped session is stopped: `breaker open`, `budget paused`; "" otherwise. */
  why: string;
  lastAt: number | null;
  tokens: number;
  /** USD spent; null when no price is known for what it spent (nothing was priced). */
  usd: number | null;
}

/** An open breaker, with the command a person runs to release it. */
export interface BreakerLine {
  scope: string;
  reason: string | null;
  detail: string | null;
  openedAt: number | null;
  release: string;
}

/** An alert not yet acknowledged. */
export interface AlertLine {
  id: string;
  scope: string;
  kind: string;
  message: string;
  at: number;
}

/** One project in the all-projects view. */
export interface ProjectView {
  id: string;
  root: string;
  name: string;
  /** When the hook daemon last opened it (its record), epoch ms. */
  servedAt: number | null;
  /** Whether the running hook daemon holds it open now. */
  servedNow: boolean;
  /** The store read (credentials redacted), or null when none could be read. */
  store: string | null;
  /** Why the project could not be read ("" when it was). */
  problem: string;
  sessions: { total: number; active: number; ended: number; stopped: number; latest: SessionLine[] };
  /** Spend since `since` (local midnight): tokens, and USD only where a price is known (else null). */
  today: { since: number; tokens: number; usd: number | null };
  breakers: BreakerLine[];
  alerts: AlertLine[];
}

/** Most sessions listed per project (the latest), and most alerts. */
export const LATEST_SESSIONS = 10;
export const LATEST_ALERTS = 10;

const quote = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

/** The command a person types to close the breaker of `scope` in the project at `root`. */
export function releaseCommand(root: string, scope: string): string {
  return `reins -C ${quote(root)} circuit reset ${quote(scope)} --reason "<why>"`;
}

/** A session's line: stopped when its breaker is open or its budget paused, whatever its agent still says. */
export function sessionLine(state: State, policy: Policy, now: number): SessionLine {
  const s = scopeSummary(state, policyFor(state.scope, policy), Math.max(state.lastAt ?? 0, now));
  const why =
    s.breaker.status === "open"
      ? "breaker open"
      : s.status === "paused" || s.status === "exhausted"
        ? `budget ${s.status}`
        : "";
  const usd = state.tally?.usd ?? 0;
  return {
    scope: state.scope,
    agent: s.agent,
    state: s.ended ? "ended" : why !== "" ? "stopped" : "active",
    why: s.ended ? "" : why,
    lastAt: state.lastAt,
    tokens: tallyTokens(state, policy),
    usd: usd > 0 ? usd : null,
  };
}

/**
 * The variables a project is read with: the user's, without the `REINS_*` overrides of the shell asking (a
 * `REINS_STORE` set there names one project's store, not every project's), but for the user's folders.
 */
function projectEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (!name.startsWith("REINS_") || name === "REINS_STATE_DIR" || name === "REINS_RUNTIME_DIR")
      out[name] = value;
  return out;
}

function emptyView(known: KnownProject, servedNow: boolean, since: number, problem: string): ProjectView {
  return {
    id: known.id,
    root: known.root,
    name: basename(known.root),
    servedAt: known.servedAt,
    servedNow,
    store: null,
    problem,
    sessions: { total: 0, active: 0, ended: 0, stopped: 0, latest: [] },
    today: { since, tokens: 0, usd: null },
    breakers: [],
    alerts: [],
  };
}

/** Fills `view` from the project's store. */
async function fill(view: ProjectView, store: Store, policy: Policy, now: number): Promise<void> {
  const lines: SessionLine[] = [];
  let usd = 0;
  for (const scope of await store.scopes()) {
    const state = await store.state(scope);
    if (state === null) continue;
    if (state.breaker.status === "open")
      view.breakers.push({
        scope,
        reason: state.breaker.reason,
        detail: state.breaker.detail,
        openedAt: state.breaker.openedAt,
        release: releaseCommand(view.root, scope),
      });
    if (!scope.startsWith("session:")) continue;
    const line = sessionLine(state, policy, now);
    lines.push(line);
    view.sessions[line.state] += 1;
    const spent = spendSince(state, policy, view.today.since);
    view.today.tokens += spent.tokens;
    usd += spent.usd;
  }
  view.sessions.total = lines.length;
  view.sessions.latest = lines.sort((a, b) => (b.lastAt ?? 0) - (a.lastAt ?? 0)).slice(0, LATEST_SESSIONS);
  view.today.usd = usd > 0 ? Math.round(usd * 1e6) / 1e6 : null;
  view.alerts = (await store.alerts({ acknowledged: false }))
    .sort((a, b) => b.at - a.at)
    .slice(0, LATEST_ALERTS)
    .map((a) => ({ id: a.id, scope: a.scope, kind: a.kind, message: a.message, at: a.at }));
}

/**
 * One project read from its own store at `now`, spend counted since `since`. Never throws: a folder gone,
 * a store never made or one that fails to open is the view's `problem`.
 */
export async function readProject(
  known: KnownProject,
  options: { env: NodeJS.ProcessEnv; now: number; since: number; servedNow: boolean },
): Promise<ProjectView> {
  const view = emptyView(known, options.servedNow, options.since, "");
  if (!existsSync(known.root)) return { ...view, problem: "its folder is gone" };
  let store: Store | null = null;
  try {
    const loaded = loadPolicy({ cwd: known.root, env: projectEnv(options.env) });
    const spec = loaded.policy.store;
    if ((spec === "" || spec === "sqlite") && !existsSync(defaultStorePath(known.root)))
      return { ...view, problem: "nothing recorded yet" };
    store = await openStore(spec, known.root);
    view.store = `${store.kind} ${redact(store.location)}`;
    await fill(view, store, loaded.policy, options.now);
    return view;
  } catch (error) {
    return { ...view, problem: `its store could not be read: ${(error as Error).message.split("\n")[0]}` };
  } finally {
    await store?.close();
  }
}
