/** The checks of `reins run`: each run in the task's working tree, one at a time, its evidence read. */
import { open, rm } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type { CheckDef, CheckResult } from "../control/types.js";
import { MAX_REPORT_BYTES, readCheckResult } from "./check-reports.js";
import { runCommand } from "./run-command.js";

/** Runs a task's checks in its working tree and reads their evidence. */

export interface RunChecksOptions {
  /** The working tree the commands run in; report paths are relative to it. */
  cwd: string;
  /** Added to the inherited environment of every command. @default {} */
  env?: Record<string, string>;
  /** Aborting kills the running check; checks not started yet fail as "not run". */
  signal?: AbortSignal;
  /** Milliseconds from any origin, for durations. @default performance.now */
  clock?: () => number;
}

/**
 * Runs each check in order, one at a time (they may share build outputs), and returns their results in the
 * same order. A check whose format reads a report gets its report file deleted first, so a file left by an
 * earlier run never counts as this run's evidence.
 */
export async function runChecks(defs: CheckDef[], options: RunChecksOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const def of defs) {
    if (options.signal?.aborted === true) {
      results.push(notRun(def, "reins: not run: the run was interrupted"));
      continue;
    }
    results.push(await runCheck(def, options));
  }
  return results;
}

async function runCheck(def: CheckDef, options: RunChecksOptions): Promise<CheckResult> {
  const report =
    def.format === "exit" || def.report === undefined ? null : reportPath(options.cwd, def.report);
  if (report !== null && "problem" in report) return notRun(def, `reins: ${report.problem}`);
  if (report !== null) {
    try {
      await rm(report.path, { force: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      return notRun(
        def,
        `reins: the old report ${def.report} cannot be deleted (${code}); the check was not run`,
      );
    }
  }

  const ran = await runCommand(def.command, {
    cwd: options.cwd,
    timeoutMs: def.timeoutMs,
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  let output = ran.output;
  if (ran.timedOut) output += `\n[reins: timed out after ${def.timeoutMs} ms; its process group was killed]`;
  if (ran.aborted) output += "\n[reins: interrupted; its process group was killed]";

  const read = report === null ? { text: null } : await readReport(report.path);
  return readCheckResult(def, {
    exitCode: ran.exitCode,
    output,
    report: read.text,
    ...(read.problem === undefined ? {} : { reportProblem: read.problem }),
    durationMs: ran.durationMs,
  });
}

/** The report's absolute path, refused when it leaves the working tree (it is deleted before each run). */
function reportPath(cwd: string, report: string): { path: string } | { problem: string } {
  const path = resolve(cwd, report);
  const inside = relative(resolve(cwd), path);
  if (inside === "" || inside.startsWith("..") || isAbsolute(inside))
    return { problem: `report path ${report} is outside the working tree; the check was not run` };
  return { path };
}

/** The report's text, null when absent, or why it cannot be read (too large, a directory, unreadable). */
async function readReport(path: string): Promise<{ text: string | null; problem?: string }> {
  let file;
  try {
    file = await open(path, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? { text: null } : { text: null, problem: `cannot be opened (${code})` };
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) return { text: null, problem: "is not a regular file" };
    if (stat.size > MAX_REPORT_BYTES)
      return { text: null, problem: `is ${stat.size} bytes, more than the ${MAX_REPORT_BYTES} read` };
    return { text: await file.readFile("utf8") };
  } catch (error) {
    return { text: null, problem: `cannot be read (${(error as Error).message})` };
  } finally {
    await file.close();
  }
}

function notRun(def: CheckDef, why: string): CheckResult {
  return {
    name: def.name,
    tier: def.tier,
    passed: false,
    exitCode: null,
    failedTests: [],
    output: why,
    durationMs: 0,
  };
}
