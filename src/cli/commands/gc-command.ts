/** `reins gc`: removes what the retention setting lets go of the store and of `.reins/runs/`. */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { forgetMarks } from "../../base/config/store-marks.js";
import type { Command } from "commander";
import type { LoadedPolicy } from "../../base/config/load-policy.js";
import { runDir } from "../../run/drive/run-trace.js";
import { defaultStorePath, openStore } from "../../base/store/open.js";
import type { GcResult } from "../../base/store/sqlite-gc.js";
import { SqliteStore } from "../../base/store/sqlite.js";
import type { Io } from "../io.js";
import { counted } from "../../base/text/plural.js";

/** What `reins gc` needs from the program. */
export interface GcContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
}

const DAY_MS = 86_400_000;

import { formatBytes, formatUsage } from "../store-usage.js";

/** Bytes of the files under `dir`. */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      total += statSync(join(entry.parentPath, entry.name)).size;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** The traces under `.reins/runs/` of the runs gc removed from the store: their bytes, removed unless dry. */
function collectTraces(
  root: string,
  runs: readonly string[],
  dryRun: boolean,
): { runs: number; bytes: number } {
  let bytes = 0;
  let count = 0;
  for (const run of runs) {
    const dir = runDir(root, run);
    if (!existsSync(dir)) continue;
    bytes += treeBytes(dir);
    count += 1;
    if (!dryRun) rmSync(dir, { recursive: true, force: true });
  }
  return { runs: count, bytes };
}

function report(result: GcResult, traces: { runs: number; bytes: number }, dryRun: boolean): string {
  const verb = dryRun ? "would remove" : "removed";
  const parts = [
    `${counted(result.scopes.length, "idle scope")}`,
    `${counted(result.records, "record")} (${formatBytes(result.recordBytes)})`,
    `${counted(result.runs.length, "proven run")} (traces ${formatBytes(traces.bytes)})`,
  ];
  const store = dryRun
    ? `the store holds ${formatUsage(result.before)}`
    : `store ${formatUsage(result.before)} → ${formatUsage(result.after)}${result.vacuumed ? " (VACUUM)" : ""}`;
  return `${verb} ${parts.join(", ")}; ${store}\n`;
}

/**
 * Why gc has nothing to do, without opening the store, or null: Redis expires its keys itself, and a
 * project with no store yet must not get one made by gc.
 */
function skipped(loaded: LoadedPolicy & { storeSpec: string }): string | null {
  if (/^rediss?(\+cluster)?:\/\//i.test(loaded.storeSpec))
    return "nothing to do: Redis expires reins' keys by their TTL itself (policy store is Redis)";
  if (
    (loaded.storeSpec === "" || loaded.storeSpec === "sqlite") &&
    !existsSync(defaultStorePath(loaded.root))
  )
    return `nothing to do: no reins store in ${loaded.root}`;
  return null;
}

/** Registers `gc`. */
export function registerGcCommands(root: Command, ctx: GcContext): void {
  root
    .command("gc")
    .description(
      "remove what the retention setting lets go: idle sessions, old records before each scope's snapshot, proven runs and their traces",
    )
    .option("--dry-run", "say what would go and remove nothing")
    .option("--json", "print JSON")
    .action(async (opts: { dryRun?: boolean; json?: boolean }) => {
      const loaded = ctx.loaded();
      const dryRun = opts.dryRun === true;
      const skip = skipped(loaded);
      if (skip !== null)
        return ctx.io.stdout(
          opts.json === true ? `${JSON.stringify({ skipped: skip }, null, 2)}\n` : `${skip}\n`,
        );
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        if (!(store instanceof SqliteStore))
          return ctx.io.stdout(`nothing to do: a ${store.kind} store keeps nothing on disk\n`);
        const { days, records } = loaded.policy.retention;
        const result = await store.collect({ before: Date.now() - days * DAY_MS, records, dryRun });
        // A scope removed whole is gone by the retention setting, not by tampering: its mark goes too.
        if (!dryRun) forgetMarks(loaded.root, ctx.io.env, result.scopes);
        const traces = collectTraces(loaded.root, result.runs, dryRun);
        ctx.io.stdout(
          opts.json === true
            ? `${JSON.stringify({ store: store.kind, location: store.location, dryRun, ...result, traces }, null, 2)}\n`
            : report(result, traces, dryRun),
        );
      } finally {
        await store.close();
      }
    });
}
