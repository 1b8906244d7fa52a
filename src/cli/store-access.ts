/** Reading and acting on the configured store from the CLI: open it, summarise a scope, record a person's action, and draw a summary. */
import { userInfo } from "node:os";
import { existsSync } from "node:fs";
import { createColors } from "picocolors";
import type { BudgetResource } from "../base/core/reins-event.js";
import { formatCount, formatDuration, formatPercent, formatUsd } from "../base/core/format.js";
import type { Policy } from "../base/core/policy.js";
import type { Store } from "../base/core/store.js";
import type { BudgetLine, ScopeSummary } from "../base/core/summary.js";
import type { LoadedPolicy } from "../base/config/load-policy.js";
import { defaultStorePath, openStore } from "../base/store/open.js";
import { recordAction, type HumanAction } from "../guard/people/actions.js";
import { currentSummary, storedSummary } from "../guard/people/scope-view.js";
import type { Io } from "./io.js";
import { type PersonClaim, provePerson } from "./person-proof.js";
import { formatUsage } from "./store-usage.js";
import { counted } from "../base/text/plural.js";
import { resolveScope } from "./scope-name.js";

/** What the store commands need from the program: the policy (with `--store` applied) and the output. */
export interface StoreContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
}

/** The budget resources a person may extend, as `--resource` names them. */
export const RESOURCE_NAMES: readonly BudgetResource[] = [
  "tokens",
  "usd",
  "premiumRequests",
  "wallTimeMs",
  "toolCalls",
];

/** How `reins budget extend` is called, for its help and for the line naming what a call left out. */
export const EXTEND_USAGE = "<scope> <amount> --reason <text> [--resource <name>] [--task] [--by <name>]";

/** "a", "a and b", "a, b and c". */
export function listed(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function amount(line: Pick<BudgetLine, "resource">, n: number): string {
  if (line.resource === "usd") return formatUsd(n);
  if (line.resource === "wallTimeMs") return formatDuration(n);
  return formatCount(n);
}

function bar(ratio: number, width = 20): string {
  const filled = Math.max(0, Math.min(width, Math.round(Math.min(1, ratio) * width)));
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
}

/** Opens the configured store (of `loaded`, when the caller has loaded it already), runs `fn`, and always closes it. */
export async function withStore<T>(
  ctx: StoreContext,
  fn: (store: Store, policy: Policy, loaded: LoadedPolicy) => Promise<T>,
  loaded: LoadedPolicy & { storeSpec: string } = ctx.loaded(),
): Promise<T> {
  const store = await openStore(loaded.storeSpec, loaded.root);
  try {
    return await fn(store, loaded.policy, loaded);
  } finally {
    await store.close();
  }
}

/**
 * The one line a read-only command prints when the project's default store (`.reins/reins.db`) has not been
 * made yet, else null: opening it would make it, and `.reins/` with it, wherever the command was run. A
 * store the user names (`--store`, the policy's `store`) is opened as named.
 */
export function noStoreYet(ctx: StoreContext): string | null {
  const { storeSpec, root } = ctx.loaded();
  if (storeSpec !== "" && storeSpec !== "sqlite") return null;
  return existsSync(defaultStorePath(root)) ? null : `no reins store in ${root}: nothing recorded yet\n`;
}

/** A scope's stored summary, read at the clock's time. */
export async function summaryNow(store: Store, scope: string, policy: Policy): Promise<ScopeSummary> {
  return storedSummary(store, scope, policy, Date.now());
}

/** Who did a human action: `--by`, else the login name, else "cli". */
export function actor(by: string | undefined): string {
  if (by !== undefined && by !== "") return by;
  try {
    return userInfo().username;
  } catch {
    return "cli";
  }
}

/** `store: sqlite .reins/reins.db holds 12 scopes, 3,456 events, 1.2 MB`, or "" for a store that cannot say. */
export async function heldLine(store: Store): Promise<string> {
  if (store.usage === undefined) return "";
  // SQLite keeps every record until `reins gc`; Redis trims as it writes and lets idle keys expire.
  const how = store.kind === "redis" ? "trimmed as it is written" : "`reins gc` trims it";
  return `store: ${store.kind} ${store.location} holds ${formatUsage(await store.usage())} (${how})\n`;
}

/**
 * Records one human action and reports its effect, once `claim` shows a person acts (before the store is
 * opened, so a refused action touches nothing).
 */
export async function act(
  ctx: StoreContext,
  claim: PersonClaim,
  scope: string,
  event: HumanAction,
  done: string,
): Promise<void> {
  const loaded = ctx.loaded();
  provePerson(loaded.root, claim);
  await withStore(
    ctx,
    async (store, policy) => {
      // A bare session id names its session; a mistyped scope gets the nearest one as a "did you mean".
      const named = resolveScope(scope, await store.scopes());
      const state = await recordAction(store, policy, loaded.root, named, event, Date.now());
      const summary = currentSummary(state, policy, Date.now());
      ctx.io.stdout(`${done}: ${named} is now ${summary.status}, breaker ${summary.breaker.status}\n`);
    },
    loaded,
  );
}

/** A scope's summary for the terminal: its budget bars, its breaker, its open alerts. */
export function renderSummary(s: ScopeSummary, io: Io, openAlerts: number): string {
  const c = createColors(io.color);
  const status =
    s.status === "paused" || s.status === "exhausted"
      ? c.red(s.status)
      : s.status === "warning"
        ? c.yellow(s.status)
        : c.green(s.status);
  const breaker =
    s.breaker.status === "open"
      ? c.red("open")
      : s.breaker.status === "half_open"
        ? c.yellow("half-open")
        : c.green("closed");
  const out = [
    `${c.bold(s.scope)}  budget ${status}  breaker ${breaker}  ${counted(s.events, "event")}  ${counted(openAlerts, "open alert")}`,
  ];
  const row = (prefix: string, line: BudgetLine) =>
    `  ${prefix}${line.resource.padEnd(16)} ${bar(line.ratio)} ${formatPercent(line.ratio).padStart(5)}  ${amount(line, line.used)} / ${amount(line, line.limit)}`;
  for (const line of s.budget) out.push(row("", line));
  if (s.task !== null) for (const line of s.task.budget) out.push(row(`task ${s.task.id}: `, line));
  if (s.breaker.status !== "closed") out.push(`  breaker: ${s.breaker.detail ?? s.breaker.reason ?? ""}`);
  // An open breaker stops the agent until a person acts: the exact command that lets one probe call through.
  if (s.breaker.status === "open")
    out.push(`  to let it try again: reins circuit ack ${s.scope} --reason "<why it may go on>"`);
  return `${out.join("\n")}\n`;
}
