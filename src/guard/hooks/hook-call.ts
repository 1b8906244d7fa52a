/** One hook call answered in-process: the input checked, planned by its adapter, recorded, replied to. */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ReinsError } from "../../base/core/errors.js";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import { createGovernor, type Governor } from "../governor.js";
import { findRoot } from "../../base/config/load-policy.js";
import { reinsDir } from "../../base/config/reins-dir.js";
import { loadPolicyCached } from "../../base/config/policy-cache.js";
import { openStore } from "../../base/store/open.js";
import { redact } from "../../base/store/redact.js";
import { UnavailableStore } from "../../base/store/unavailable.js";
import { Spool } from "../../base/store/spool.js";
import { HOOK_AGENTS, AGENTS } from "./hook-agents.js";
import type { AgentAdapter, HookPlan } from "./agent-adapter.js";
import type { State } from "../../base/core/state.js";
import { TranscriptReader } from "./transcript.js";
import { eventsAt } from "../../base/vocabulary/event-builders.js";
import { projectNotices, type ProjectNotices } from "./notices.js";
import { tamperWatch, type TamperWatch } from "./tamper-check.js";
import { isUserHook, userHookAnswer, userTurnUpkeep } from "./user-hook.js";
import { linkReinsDir, restoreReinsLink } from "../../base/config/reins-link.js";
import { runtimeDir } from "../../base/config/user-dirs.js";
import { appendTamper } from "./tamper-record.js";
import type { FinishedCall } from "./finished-calls.js";

/** Hook input larger than this is refused (allowed, with a warning): no agent sends that much. */
export const MAX_HOOK_INPUT = 16 * 1024 * 1024;

export interface HookResult {
  /** The agent's JSON reply, or null for a plain allow. */
  reply: object | null;
  /** One line for stderr when something went wrong, else "". */
  warning: string;
  /** The project the call was answered for, once it was known. */
  root?: string;
}

const allow = (warning: string): HookResult => ({ reply: null, warning });

/** What a hook needs that outlives one call: the project's store, policy and folders. */
export interface HookServices {
  root: string;
  policy: Policy;
  store: Store;
  spool: Spool;
  transcripts: TranscriptReader;
  /**
   * What the replies must say about guarding itself (see guard/hooks/notices.ts), asked at a turn's start and with
   * a deny only. @default nothing to tell
   */
  notices?: ProjectNotices;
  /** The checks at a turn's start and end that the hooks and the store are as reins left them. @default none */
  tamper?: TamperWatch;
}

/**
 * The services of the project at `root`, opened from its policy (and `REINS_STORE`). With `remote`
 * (hooks, not the server itself) and `REINS_SERVER_URL` set, the store is that shared server. With
 * `requireConnection: false` (the daemon) a Redis store that does not answer yet is opened all the same.
 */
export async function openServices(
  root: string,
  env: NodeJS.ProcessEnv,
  options: { remote?: boolean; storeSpec?: string; requireConnection?: boolean; runtime?: string } = {},
): Promise<HookServices> {
  keepReinsLink(root, env, options.runtime ?? runtimeDir(env));
  reinsDir(root);
  const policy = loadPolicyCached({ cwd: root, env });
  const server = options.remote === true ? env.REINS_SERVER_URL : undefined;
  const spec = options.storeSpec ?? env.REINS_STORE ?? policy.store;
  let store: Store;
  try {
    store =
      server !== undefined && server !== ""
        ? await openRemote(server, env, root)
        : await openStore(
            spec,
            root,
            options.requireConnection === false ? { requireConnection: false } : {},
          );
  } catch (error) {
    // A hook must still answer, spool and honour failClosed when its store cannot be opened.
    if (options.remote !== true || !ReinsError.is(error) || error.code !== "store_unavailable") throw error;
    store = new UnavailableStore(redact(spec), error);
  }
  const spool = new Spool(join(root, ".reins", "spool"));
  return {
    root,
    policy,
    store,
    spool,
    transcripts: new TranscriptReader(join(root, ".reins", "transcripts")),
    notices: projectNotices(root, env, options.runtime),
    // The daemon opens a project with the variables its hook call sent (REINS_*), not the user's folders:
    // the state folder is the user's, as the daemon's own environment says.
    tamper: tamperWatch(root, { ...process.env, ...env }, policy, spool),
  };
}

/**
 * Before a project's `.reins/` is used: a project the user-level hooks guard gets its `.reins` as a link into
 * the state folder (base/config/reins-link.ts), and a link the state folder records that was removed or replaced
 * is put back, in the tamper record for the next turn's start and `reins doctor`.
 */
function keepReinsLink(root: string, env: NodeJS.ProcessEnv, runtime: string): void {
  // The state folder is the user's (the daemon's own environment), as the tamper watch's.
  const full = { ...process.env, ...env };
  const now = Date.now();
  const repair = restoreReinsLink(root, full, now);
  if (repair.kind === "restored") {
    // No daemon may have made the runtime folder yet; it is made as the daemon makes it (0700).
    mkdirSync(runtime, { recursive: true, mode: 0o700 });
    appendTamper(runtime, {
      at: now,
      kind: "reins-link",
      socket: join(root, ".reins"),
      by: `hook ${process.pid}`,
      detail: repair.line,
    });
  }
  linkReinsDir(root, full, isUserHook(env));
}

async function openRemote(url: string, env: NodeJS.ProcessEnv, root: string): Promise<Store> {
  const { RemoteStore, DEFAULT_REMOTE_TIMEOUT_MS } = await import("../../base/store/remote.js");
  const timeout = Number(env.REINS_SERVER_TIMEOUT_MS ?? DEFAULT_REMOTE_TIMEOUT_MS);
  // Which of a fleet's servers answered the project's hooks last: the next hook process tries it first,
  // so a server that hangs costs one call its share of the timeout, not every call.
  const last = join(root, ".reins", "server-answered");
  let first: string | undefined;
  try {
    first = readFileSync(last, "utf8").trim();
  } catch {
    // none yet: the servers in the order listed
  }
  return new RemoteStore(
    url,
    env.REINS_TOKEN ?? "",
    Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_REMOTE_TIMEOUT_MS,
    {
      ...(first !== undefined ? { first } : {}),
      onAnswer: (server) => {
        try {
          writeFileSync(`${last}.${process.pid}`, server);
          renameSync(`${last}.${process.pid}`, last);
        } catch {
          // only a hint for the next call
        }
      },
    },
  );
}

/**
 * The fields of an input too large to parse that still say whose call it is and what it is, from its start,
 * each with the pattern that finds its string value.
 */
const HEAD_FIELDS = [
  "session_id",
  "hook_event_name",
  "tool_name",
  "tool_use_id",
  "cwd",
  "turn_id",
  "prompt_id",
  // Copilot CLI's camelCase fields.
  "sessionId",
  "toolName",
].map((field) => [field, new RegExp(`"${field}"\\s*:\\s*("(?:[^"\\\\]|\\\\.){0,4096}")`)] as const);

/**
 * An input over MAX_HOOK_INPUT is not parsed, but it is not let through unguarded either: its session,
 * hook and tool are read from its first bytes and the call is judged without its content (a paused budget
 * or an open breaker still stops it), with one line saying so.
 */
function oversize(agent: string, adapter: AgentAdapter, raw: Buffer | string, size: number) {
  const head = typeof raw === "string" ? raw.slice(0, 65_536) : raw.subarray(0, 65_536).toString("utf8");
  const input: Record<string, unknown> = { tool_input: { oversize: size } };
  for (const [field, pattern] of HEAD_FIELDS) {
    const match = pattern.exec(head);
    if (match?.[1] !== undefined) input[field] = JSON.parse(match[1]) as unknown;
  }
  const parsed = adapter.input.safeParse(input);
  const what = `reins hook ${agent}: input of ${size} bytes is over the ${MAX_HOOK_INPUT}-byte limit`;
  if (!parsed.success) return allow(`${what}, and its start names no session; allowed without guarding`);
  return { adapter, input: parsed.data, warning: `${what}; judged without its content` };
}

/** Checks raw hook input: the adapter and the parsed input, or the allow-with-warning for bad input. */
export function readHookInput(
  agent: string,
  raw: Buffer | string,
): { adapter: AgentAdapter; input: unknown; warning?: string } | HookResult {
  const adapter = HOOK_AGENTS[agent];
  if (adapter === undefined)
    return allow(`reins hook: unknown agent "${agent}" (use ${AGENTS.join(", ")}); allowed without guarding`);
  const size = typeof raw === "string" ? Buffer.byteLength(raw) : raw.length;
  if (size > MAX_HOOK_INPUT) return oversize(agent, adapter, raw, size);
  const text = raw.toString().trim();
  if (text === "") return allow(`reins hook ${agent}: empty input; allowed without guarding`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return allow(`reins hook ${agent}: input is not JSON; allowed without guarding`);
  }
  const parsed = adapter.input.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? "value" : issue.path.join(".");
    return allow(
      `reins hook ${agent}: input is missing or has a bad ${field} (${issue?.message ?? "invalid"}); allowed without guarding`,
    );
  }
  return { adapter, input: parsed.data };
}

/**
 * The scope's state for planning a call, or null while the store is down: the call's events must still
 * reach the governor, which spools them and answers fail-open or fail-closed.
 */
async function stateOrNull(store: Store, scope: string) {
  try {
    return await store.state(scope);
  } catch (error) {
    if (ReinsError.is(error) && error.code === "store_unavailable") return null;
    throw error;
  }
}

/**
 * What the store says of itself even while it answers (a shared server list with entries skipped), said
 * once per project and list rather than on every call: `.reins/store-warned` keeps the last one said.
 */
function firstTimeWarning(services: HookServices): string {
  const said = (services.store as { warning?: unknown }).warning;
  if (typeof said !== "string" || said === "") return "";
  const file = join(services.root, ".reins", "store-warned");
  try {
    if (readFileSync(file, "utf8") === said) return "";
  } catch {
    // never said yet
  }
  try {
    writeFileSync(file, said);
  } catch {
    // said again next time
  }
  return `reins: ${said}`;
}

/** Records one checked hook input through `services` and builds the agent's reply. */
export async function answerHook(
  adapter: AgentAdapter,
  input: unknown,
  services: HookServices,
  now: number,
): Promise<HookResult> {
  const { store, policy } = services;
  const scope = `session:${adapter.session(input)}`;
  const before = adapter.needsState(input) ? await stateOrNull(store, scope) : null;
  // The transcript's new lines are read as this call's; where the reading got to is saved only once the
  // events are stored or spooled, so a call that dies in between leaves them to the next.
  const transcripts = services.transcripts.forCall();
  const owed = adapter.owedReplyLine?.(input);
  if (owed !== undefined) await transcripts.awaitReplyLine(adapter.session(input), owed);
  // What the tamper check finds is told with the turn's status, after the project's own notices.
  let tampered: readonly string[] = [];
  const project = services.notices;
  const plan = adapter.plan(input, {
    policy,
    before,
    transcripts,
    notices: (when) => [...(project?.(when, adapter.name) ?? []), ...(when === "turn" ? tampered : [])],
  });
  const events = eventsAt(plan.scope, now, plan.events);
  let warning = "";
  const governor = createGovernor({
    store,
    policy,
    spool: services.spool,
    onWarning: (line) => (warning = line),
  });
  const recorded = await governor.record(plan.scope, events);
  if (recorded.kept) transcripts.commit();
  if (warning === "") warning = firstTimeWarning(services);
  // The batch returns the new state; only a call that recorded nothing reads it (for a status reply).
  const state =
    recorded.state ??
    (events.length === 0 && recorded.degraded === null ? await store.state(plan.scope) : null);
  if (plan.turn !== undefined && services.tamper !== undefined && state !== null) {
    const added = recorded.records.filter((r) => r.scope === plan.scope).length;
    const finished = transcripts.finishedCalls?.(adapter.session(input)) ?? [];
    tampered = await checkTurn(services.tamper, plan, governor, state, { added, now, finished });
  }
  return { reply: plan.reply(recorded.answers, state), warning };
}

/**
 * The tamper check of a turn's start or end (guard/hooks/tamper-check.ts): what it found is recorded in the
 * session's scope and returned for the model. A check that fails says so instead.
 */
async function checkTurn(
  watch: TamperWatch,
  plan: HookPlan,
  governor: Governor,
  state: State,
  at: { added: number; now: number; finished: readonly FinishedCall[] },
): Promise<string[]> {
  const { added, now } = at;
  try {
    if (plan.turn === "close") {
      await watch.close(governor.store, plan.scope, state, added, now);
      return [];
    }
    const found = await watch.open(governor.store, plan.scope, state, added, now, at.finished);
    if (found.length > 0)
      await governor.record(
        plan.scope,
        eventsAt(
          plan.scope,
          now,
          found.map((f) => ({ kind: "guard.tampered", what: f.what, detail: f.detail })),
        ),
      );
    return found.map((f) => f.detail);
  } catch (error) {
    return [`reins could not check its own guarding: ${(error as Error).message.split("\n")[0] ?? ""}`];
  }
}

/** A result with one more line of warning, when there is one. */
export function withWarning(result: HookResult, warning: string | undefined): HookResult {
  if (warning === undefined) return result;
  return { ...result, warning: result.warning === "" ? warning : `${warning}; ${result.warning}` };
}

/** The one line for a failure inside a hook. */
export function hookFailure(agent: string, error: unknown): HookResult {
  const message = ReinsError.is(error)
    ? error.message
    : error instanceof Error
      ? error.message
      : String(error);
  return allow(`reins hook ${agent}: ${message.split("\n")[0] ?? "failed"}; allowed without guarding`);
}

/**
 * The folder of the project a hook call belongs to: the one the agent was started in, as the agent says it
 * (its own environment variables, `adapter.projectEnv`), before the cwd of the call (its input's, else the
 * process's). After a `cd` into a nested repository the cwd names another root, and the session would start
 * afresh in its store. Another agent's variable is not read: a Codex hook run inside a Claude Code session
 * inherits Claude's CLAUDE_PROJECT_DIR, which names Claude's project, not Codex's.
 */
export function projectOf(
  adapter: AgentAdapter,
  input: unknown,
  env: NodeJS.ProcessEnv,
  cwd: string,
): string {
  for (const name of adapter.projectEnv) {
    const dir = env[name];
    if (dir !== undefined) return dir;
  }
  return adapter.cwd(input) ?? cwd;
}

/**
 * Answers one hook call in-process (the slow path: it opens the store itself): parse and check the input,
 * record its events, reply in the agent's protocol. Never throws and never blocks by accident: any failure
 * is an allow with one line saying why.
 */
export async function runHook(
  agent: string,
  raw: Buffer,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<HookResult> {
  const checked = readHookInput(agent, raw);
  if (!("adapter" in checked)) return checked;
  const { adapter, input } = checked;
  try {
    const root = findRoot(projectOf(adapter, input, env, cwd));
    const standIn = userHookAnswer(agent, input, root, env);
    if (standIn !== undefined) return { reply: standIn.reply, warning: "" };
    const services = await openServices(root, env, { remote: true });
    userTurnUpkeep(agent, input, root, env);
    try {
      return {
        ...withWarning(await answerHook(adapter, input, services, Date.now()), checked.warning),
        root,
      };
    } finally {
      await services.store.close();
    }
  } catch (error) {
    return hookFailure(agent, error);
  }
}
