/** The CLI commands on stored state: status, sessions, budget, circuit, confirm, alerts and export. */
import { userInfo } from "node:os";
import { existsSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { createColors } from "picocolors";
import { ReinsError } from "../core/errors.js";
import type { BudgetResource } from "../core/reins-event.js";
import { formatCount, formatDuration, formatPercent, formatUsd } from "../core/format.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../core/store.js";
import type { BudgetLine, ScopeSummary } from "../core/summary.js";
import type { LoadedPolicy } from "../config/load-policy.js";
import { traceHeader, traceLine } from "../trace/trace.js";
import { defaultStorePath, openStore } from "../store/open.js";
import { acknowledgeAlert, recordAction, type HumanAction } from "../people/actions.js";
import { currentSummary, noScope, policyFor, storedSummary } from "../people/scope-view.js";
import type { Io } from "./io.js";
import { table } from "../text/table.js";
import { REINS_BIN } from "../config/package-info.js";
import { listDaemons } from "../daemon/list.js";
import { formatDaemons } from "./daemon-commands.js";
import { formatUsage } from "./gc-commands.js";

/** What the store commands need from the program: the policy (with `--store` applied) and the output. */
export interface StoreContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
}

const RESOURCE_NAMES: readonly BudgetResource[] = [
  "tokens",
  "usd",
  "premiumRequests",
  "wallTimeMs",
  "toolCalls",
];

/** How `reins budget extend` is called, for its help and for the line naming what a call left out. */
const EXTEND_USAGE = "<scope> <amount> --reason <text> [--resource <name>] [--task] [--by <name>]";

/** "a", "a and b", "a, b and c". */
function listed(items: readonly string[]): string {
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

/** Opens the configured store, runs `fn`, and always closes it. */
async function withStore<T>(
  ctx: StoreContext,
  fn: (store: Store, policy: Policy, loaded: LoadedPolicy) => Promise<T>,
): Promise<T> {
  const loaded = ctx.loaded();
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
function noStoreYet(ctx: StoreContext): string | null {
  const { storeSpec, root } = ctx.loaded();
  if (storeSpec !== "" && storeSpec !== "sqlite") return null;
  return existsSync(defaultStorePath(root)) ? null : `no reins store in ${root}: nothing recorded yet\n`;
}

async function summaryNow(store: Store, scope: string, policy: Policy): Promise<ScopeSummary> {
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
async function heldLine(store: Store): Promise<string> {
  if (store.usage === undefined) return "";
  // SQLite keeps every record until `reins gc`; Redis trims as it writes and lets idle keys expire.
  const how = store.kind === "redis" ? "trimmed as it is written" : "`reins gc` trims it";
  return `store: ${store.kind} ${store.location} holds ${formatUsage(await store.usage())} (${how})\n`;
}

/** Records one human action and reports its effect. */
async function act(ctx: StoreContext, scope: string, event: HumanAction, done: string): Promise<void> {
  await withStore(ctx, async (store, policy, loaded) => {
    const state = await recordAction(store, policy, loaded.root, scope, event, Date.now());
    const summary = currentSummary(state, policy, Date.now());
    ctx.io.stdout(`${done}: ${scope} is now ${summary.status}, breaker ${summary.breaker.status}\n`);
  });
}

function renderSummary(s: ScopeSummary, io: Io, openAlerts: number): string {
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
    `${c.bold(s.scope)}  budget ${status}  breaker ${breaker}  ${s.events} events  ${openAlerts} open alert(s)`,
  ];
  const row = (prefix: string, line: BudgetLine) =>
    `  ${prefix}${line.resource.padEnd(16)} ${bar(line.ratio)} ${formatPercent(line.ratio).padStart(5)}  ${amount(line, line.used)} / ${amount(line, line.limit)}`;
  for (const line of s.budget) out.push(row("", line));
  if (s.task !== null) for (const line of s.task.budget) out.push(row(`task ${s.task.id}: `, line));
  if (s.breaker.status !== "closed") out.push(`  breaker: ${s.breaker.detail ?? s.breaker.reason ?? ""}`);
  return `${out.join("\n")}\n`;
}

/** `status`, `sessions`, `budget`, `circuit`, `confirm`, `alerts` and `export`: looking at and acting on stored state. */
export function registerStoreCommands(root: Command, ctx: StoreContext): void {
  const { io } = ctx;
  const json = (value: unknown) => io.stdout(`${JSON.stringify(value, null, 2)}\n`);

  root
    .command("status")
    .description("budget bars, breaker state and open alerts of one scope, or of the latest sessions")
    .argument("[scope]", "e.g. session:abc; all recent scopes when left out")
    .option("--json", "print JSON")
    .option(
      "--daemons",
      "the user's hook daemons and the projects each answers for (as `reins daemon status`)",
    )
    .action(async (scope: string | undefined, opts: { json?: boolean; daemons?: boolean }) => {
      if (opts.daemons === true) {
        const entries = await listDaemons(io.env);
        return opts.json === true ? json(entries) : io.stdout(formatDaemons(entries, Date.now(), REINS_BIN));
      }
      const none = noStoreYet(ctx);
      if (none !== null) return opts.json === true ? json([]) : io.stdout(none);
      await withStore(ctx, async (store, policy) => {
        const scopes = scope === undefined ? (await store.scopes()).slice(0, 20) : [scope];
        const summaries = await Promise.all(scopes.map((s) => summaryNow(store, s, policy)));
        const alerts = await store.alerts({ acknowledged: false });
        if (opts.json === true)
          return json(
            summaries.map((s) => ({ ...s, openAlerts: alerts.filter((a) => a.scope === s.scope).length })),
          );
        const held = await heldLine(store);
        if (summaries.length === 0)
          return io.stdout(`no sessions yet: run an agent with reins hooks, or \`reins demo\`\n${held}`);
        io.stdout(
          summaries
            .map((s) => renderSummary(s, io, alerts.filter((a) => a.scope === s.scope).length))
            .join("\n") + `\n${held}`,
        );
      });
    });

  root
    .command("sessions")
    .description("every scope in the store, most recently active first")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const none = noStoreYet(ctx);
      if (none !== null) return opts.json === true ? json([]) : io.stdout(none);
      await withStore(ctx, async (store, policy) => {
        const summaries = await Promise.all((await store.scopes()).map((s) => summaryNow(store, s, policy)));
        if (opts.json === true) return json(summaries);
        const rows = summaries.map((s) => {
          const tokens = s.budget.find((b) => b.resource === "tokens");
          return [
            s.scope,
            String(s.events),
            s.lastAt === null ? "-" : new Date(s.lastAt).toISOString().replace("T", " ").slice(0, 19),
            tokens === undefined ? "-" : `${formatCount(tokens.used)} / ${formatCount(tokens.limit)}`,
            s.status,
            s.breaker.status,
          ];
        });
        io.stdout(
          table(["scope", "events", "last activity (UTC)", "tokens", "budget", "breaker"], rows, [
            "left",
            "right",
          ]),
        );
      });
    });

  const budget = root.command("budget").description("extend or reset a budget");
  budget
    .command("extend")
    .description("give a scope more budget (un-pauses it when it is enough)")
    .usage(EXTEND_USAGE)
    // Checked in the action rather than by commander, which would name only the first thing missing
    // (and --reason before the arguments).
    .argument("[scope]")
    .argument("[amount]", "how much to add, in the resource's unit (tokens, USD, ms, calls)")
    .option("--reason <text>", "why (required; recorded with who did it)")
    .option("--resource <name>", `one of ${RESOURCE_NAMES.join(", ")}`, "tokens")
    .option("--task", "extend the scope's current task instead of the session")
    .option("--by <name>", "who extends it (default: the OS user)")
    .action(
      async (
        scope: string | undefined,
        raw: string | undefined,
        opts: { reason?: string; resource: string; task?: boolean; by?: string },
      ) => {
        const missing = [
          ...(scope === undefined ? ["a scope"] : []),
          ...(raw === undefined ? ["an amount"] : []),
          ...(opts.reason === undefined ? ["a reason (--reason)"] : []),
        ];
        if (scope === undefined || raw === undefined || opts.reason === undefined)
          throw new ReinsError(
            "usage",
            `budget extend needs ${listed(missing)}: reins budget extend ${EXTEND_USAGE}`,
          );
        const amountValue = Number(raw);
        if (!Number.isFinite(amountValue) || amountValue <= 0)
          throw new ReinsError("usage", `amount must be a positive number, got "${raw}"`);
        if (!RESOURCE_NAMES.includes(opts.resource as BudgetResource)) {
          throw new ReinsError(
            "usage",
            `--resource must be one of ${RESOURCE_NAMES.join(", ")}, got "${opts.resource}"`,
          );
        }
        if (opts.reason.trim() === "") throw new ReinsError("usage", "--reason must not be empty");
        await act(
          ctx,
          scope,
          {
            kind: "human.budget_extended",
            resource: opts.resource as BudgetResource,
            amount: amountValue,
            meter: opts.task === true ? "task" : "session",
            by: actor(opts.by),
            reason: opts.reason,
          },
          `extended by ${raw} ${opts.resource}`,
        );
      },
    );
  budget
    .command("reset")
    .description("start a scope's budget from zero")
    .argument("<scope>")
    .requiredOption("--reason <text>", "why")
    .option("--by <name>", "who resets it")
    .action(async (scope: string, opts: { reason: string; by?: string }) => {
      await act(
        ctx,
        scope,
        { kind: "human.budget_reset", by: actor(opts.by), reason: opts.reason },
        "budget reset",
      );
    });

  const circuit = root.command("circuit").description("acknowledge or reset a circuit breaker");
  circuit
    .command("ack")
    .description("acknowledge an open breaker: it turns half-open and lets one probe call through")
    .argument("<scope>")
    .option("--reason <text>", "why")
    .option("--by <name>", "who acknowledges")
    .action(async (scope: string, opts: { reason?: string; by?: string }) => {
      await act(
        ctx,
        scope,
        {
          kind: "human.circuit_acknowledged",
          by: actor(opts.by),
          ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
        },
        "acknowledged",
      );
    });
  circuit
    .command("reset")
    .description("close a breaker and clear its counters")
    .argument("<scope>")
    .option("--reason <text>", "why")
    .option("--by <name>", "who resets it")
    .action(async (scope: string, opts: { reason?: string; by?: string }) => {
      await act(
        ctx,
        scope,
        {
          kind: "human.circuit_reset",
          by: actor(opts.by),
          ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
        },
        "breaker reset",
      );
    });

  root
    .command("confirm")
    .description("let work go on where reins asked a person (churn intervention, halted task)")
    .argument("<scope>")
    .option("--reason <text>", "why")
    .option("--by <name>", "who confirms")
    .action(async (scope: string, opts: { reason?: string; by?: string }) => {
      await act(
        ctx,
        scope,
        {
          kind: "human.confirmed",
          by: actor(opts.by),
          ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
        },
        "confirmed",
      );
    });

  root
    .command("alerts")
    .description("open alerts, newest first; --ack <id> acknowledges one")
    .option("--scope <scope>", "only this scope's alerts")
    .option("--all", "acknowledged ones too")
    .option("--ack <id>", "acknowledge this alert")
    .option("--by <name>", "who acknowledges")
    .option("--json", "print JSON")
    .action(async (opts: { scope?: string; all?: boolean; ack?: string; by?: string; json?: boolean }) => {
      await withStore(ctx, async (store, policy, loaded) => {
        if (opts.ack !== undefined) {
          const by = actor(opts.by);
          const alert = await acknowledgeAlert(store, policy, loaded.root, opts.ack, by, Date.now());
          if (alert === null)
            throw new ReinsError("not_found", `no alert "${opts.ack}" (see \`reins alerts --all\`)`);
          if (opts.json === true) return json(alert);
          return io.stdout(`acknowledged ${alert.id}\n`);
        }
        const alerts = await store.alerts({
          ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
          ...(opts.all === true ? {} : { acknowledged: false }),
        });
        if (opts.json === true) return json(alerts);
        if (alerts.length === 0) return io.stdout("no open alerts\n");
        io.stdout(
          table(
            ["id", "time (UTC)", "kind", "message"],
            alerts.map((a) => [
              a.id,
              new Date(a.at).toISOString().slice(0, 19).replace("T", " "),
              a.kind + (a.acknowledged ? ` (ack ${a.acknowledgedBy ?? ""})` : ""),
              a.message,
            ]),
          ),
        );
      });
    });

  root
    .command("export")
    .description("write a scope's events and decisions as a trace that `reins check` replays")
    .argument("<scope>")
    .option("--out <file>", "write to a file instead of stdout")
    .action(async (scope: string, opts: { out?: string }) => {
      await withStore(ctx, async (store, policy) => {
        if ((await store.state(scope)) === null) throw noScope(scope);
        const lines = [
          traceHeader(policyFor(scope, policy), scope.startsWith("pool:") ? "pool" : "standard"),
        ];
        for (let from = 0; ; from += 1_000) {
          const page = await store.events(scope, { from, limit: 1_000 });
          for (const r of page) lines.push(traceLine(r.event, r.decision));
          if (page.length < 1_000) break;
        }
        const text = `${lines.join("\n")}\n`;
        if (opts.out === undefined) return io.stdout(text);
        writeFileSync(opts.out, text);
        io.stdout(`${lines.length - 1} events of ${scope} written to ${opts.out}\n`);
      });
    });
}
