/** `verify_*_completion`: run a scope's required checks, gather the evidence, record and answer a verdict. */
import { createHash } from "node:crypto";
import type { CheckResult } from "../control/types.js";
import { runChecks } from "../checks/checks.js";
import { Git } from "../git/git.js";
import { changedBetween, EMPTY_TREE, headCommit, treeFingerprint } from "./fingerprint.js";
import { own } from "../control/graph.js";
import { adviceOf, readLedger, record, startOf, verdictName, type PlanEvent } from "./ledger.js";
import { askOracle, oracleNote, type OracleReport } from "./oracle-report.js";
import type { Finding, McpContext } from "./context.js";
import { descendantsOf, nodeOf, scopeChecks, someOf, type Level } from "./plan-view.js";

/** The evidence a verdict rests on. */
export interface Evidence {
  scope: { level: Level; id: string; kind: string; title: string };
  acceptance: string[];
  checks: {
    name: string;
    tier: string;
    command: string;
    passed: boolean;
    exitCode: number | null;
    failedTests: string[];
    durationMs: number;
  }[];
  /** The commit the diff is taken against, and where it came from. */
  base: string;
  baseFrom: "task started" | "HEAD" | "empty repository";
  filesChanged: string[];
  linesChanged: number;
  /** The diff since the base (untracked files as new files), cut at DIFF_BYTES. */
  diff: string;
  /** The working tree's fingerprint the checks ran on: `complete` needs the tree to still have it. */
  fingerprint: string;
  /** What reins' guards said on recording the verify (a breaker, a budget), if anything. */
  advice: string[];
}

/** A verify's answer. */
export interface Verdict {
  /** Every required check passed, on a tree that did not change while they ran. */
  passed: boolean;
  /** 1 when the checks decided it; lower when a check could not finish or there was nothing to run. */
  confidence: number;
  findings: Finding[];
  summary: string;
  evidence: Evidence;
  /** What the oracle said; null when it is off or was not asked (a red check already decided). */
  oracle: OracleReport | null;
}

/** Bytes of the diff put in an answer: enough to review a task, not a flood for the model's context. */
export const DIFF_BYTES = 24 * 1024;
/** Characters of a failing check's output kept in a finding. */
const OUTPUT_TAIL = 2_000;

const tail = (text: string) => (text.length > OUTPUT_TAIL ? `…${text.slice(-OUTPUT_TAIL)}` : text);

/** The failure fingerprint of a red check (as `reins run` records it), so the breaker tells repeats. */
function failureOf(result: CheckResult): string {
  return createHash("sha256")
    .update(result.failedTests.length > 0 ? result.failedTests.join("\n") : result.output.slice(-500))
    .digest("hex")
    .slice(0, 16);
}

/** The base of a node's diff: the commit recorded when it started, else HEAD, else the empty tree. */
async function baseOf(
  root: string,
  started: string | null,
): Promise<{ base: string; from: Evidence["baseFrom"] }> {
  if (started !== null) return { base: started, from: "task started" };
  const head = await headCommit(root);
  return head !== null ? { base: head, from: "HEAD" } : { base: EMPTY_TREE, from: "empty repository" };
}

/** The diff of the tree since the node began, with the files and lines it changes. */
async function diffSince(
  root: string,
  started: string | null,
): Promise<{
  base: string;
  from: Evidence["baseFrom"];
  stat: { files: string[]; lines: number };
  diff: string;
}> {
  const { base, from } = await baseOf(root, started);
  const git = new Git(root);
  try {
    return { base, from, stat: await git.diffStat(base), diff: await git.diff(base, DIFF_BYTES) };
  } catch (error) {
    // A base that is gone (rebased away and collected) leaves the checks to speak alone.
    const diff = `[reins: no diff against ${base}: ${(error as Error).message}]`;
    return { base, from, stat: { files: [], lines: 0 }, diff };
  }
}

function findingOf(result: CheckResult, command: string): Finding {
  const what =
    result.exitCode === null
      ? "did not finish"
      : result.failedTests.length > 0
        ? `failed (exit ${result.exitCode}, ${result.failedTests.length} failing test(s))`
        : `failed (exit ${result.exitCode})`;
  return {
    check: result.name,
    message: `${result.name} ${what}: ${command}`,
    failedTests: result.failedTests.slice(0, 50),
    output: tail(result.output),
  };
}

/**
 * Verifies node `id` at `level`: runs its scope's checks in the project (scopeChecks), reads the diff since
 * the node began, records each check and the verdict in the plan scope, and answers the verdict. Passed means
 * every check passed on an unchanged tree; a scope without checks never passes (nothing showed it works).
 */
export async function verifyScope(
  ctx: McpContext,
  level: Level,
  id: string,
  options: { signal?: AbortSignal; progress?: (done: number, total: number, check: string) => void } = {},
): Promise<Verdict> {
  const view = ctx.plan();
  const node = nodeOf(view, id, level);
  const defs = scopeChecks(view, node.id);
  const now = ctx.now ?? Date.now;
  const { before, results, after } = await runScopeChecks(ctx, defs, options);

  const commandOf = (r: CheckResult) => own(view.checks, r.name)?.command ?? "";
  const findings: Finding[] = results.filter((r) => !r.passed).map((r) => findingOf(r, commandOf(r)));
  if (defs.length === 0)
    findings.push({
      check: null,
      message: `the plan names no check for ${node.id}, so nothing shows it works: add checks to the plan`,
      failedTests: [],
      output: "",
    });
  if (before !== after) {
    const moved = await changedBetween(ctx.root, before, after);
    findings.push({
      check: null,
      message: `the working tree changed while the checks ran (${moved.join(", ") || "unknown files"}), so they may not show the tree as it is: verify again; if the checks write these files themselves, have git ignore them`,
      failedTests: [],
      output: "",
    });
  }
  const checksPassed = findings.length === 0;
  const unfinished = results.some((r) => r.exitCode === null);
  let confidence = defs.length === 0 ? 0 : before !== after || unfinished ? 0.5 : 1;

  const ledger = await readLedger(ctx.store, view.scope);
  const started = startOf(ledger, [node.id, ...descendantsOf(view, node.id)]);
  const { base, from, stat, diff } = await diffSince(ctx.root, started);

  // The oracle is asked only once the checks passed: it may veto, never grant.
  let oracle: OracleReport | null = null;
  if (checksPassed && ctx.policy.oracle.enabled) {
    const said = await askOracle(
      ctx,
      {
        title: `${level} ${node.id}: ${node.title}`,
        acceptance: node.acceptance,
        diff,
        filesChanged: stat.files,
        checks: results.map((r) => ({ name: r.name, command: commandOf(r), passed: r.passed })),
      },
      options.signal,
    );
    findings.push(...said.findings);
    oracle = said.report;
    if (oracle.outcome === "vetoed") confidence = oracle.confidence ?? confidence;
  }
  const vetoed = oracle?.outcome === "vetoed";
  const passed = checksPassed && !vetoed;

  const at = now();
  const events = verificationEvents(level, node.id, at, results, commandOf, passed, before);
  const advice = adviceOf(await record(ctx.store, view.scope, ctx.policy, events));

  const green = results.filter((r) => r.passed).length;
  const reviewed = oracleNote(oracle);
  const pinned =
    view.judgesChanged.length === 0
      ? ""
      : ` The plan's checks were edited since this server started (${someOf(view.judgesChanged, 5)}): verified with the checks it started with; a person restarts reins mcp to take the new ones.`;
  const summary = passed
    ? `${level} ${node.id}: passed: ${green} of ${defs.length} check(s) green on this tree; ${stat.files.length} file(s) changed since ${base.slice(0, 12)} (${from}).${reviewed} Now update_task_status(${node.id}, complete) is accepted until the tree changes.${pinned}`
    : `${level} ${node.id}: not passed: ${findings.map((f) => f.message).join("; ")}${pinned}`;
  return {
    passed,
    confidence,
    findings,
    summary,
    evidence: {
      scope: { level, id: node.id, kind: node.kind, title: node.title },
      acceptance: node.acceptance,
      checks: results.map((r) => ({
        name: r.name,
        tier: r.tier,
        command: commandOf(r),
        passed: r.passed,
        exitCode: r.exitCode,
        failedTests: r.failedTests.slice(0, 50),
        durationMs: Math.round(r.durationMs),
      })),
      base,
      baseFrom: from,
      filesChanged: stat.files,
      linesChanged: stat.lines,
      diff,
      fingerprint: before,
      advice,
    },
    oracle,
  };
}

/** The scope's checks, one at a time with progress, and the tree's fingerprint before and after them. */
async function runScopeChecks(
  ctx: McpContext,
  defs: Parameters<typeof runChecks>[0],
  options: { signal?: AbortSignal; progress?: (done: number, total: number, check: string) => void },
): Promise<{ before: string; results: CheckResult[]; after: string }> {
  const before = await treeFingerprint(ctx.root);
  const results: CheckResult[] = [];
  for (const [i, def] of defs.entries()) {
    options.progress?.(i, defs.length, def.name);
    results.push(
      ...(await runChecks([def], {
        cwd: ctx.root,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      })),
    );
  }
  const after = await treeFingerprint(ctx.root);
  return { before, results, after };
}

/** What a verify records: each check's run, then the verdict of the scope, fingerprinted by the tree it saw. */
function verificationEvents(
  level: Level,
  task: string,
  at: number,
  results: readonly CheckResult[],
  commandOf: (r: CheckResult) => string,
  passed: boolean,
  before: string,
): PlanEvent[] {
  const events: PlanEvent[] = [
    ...results.map((r): PlanEvent => ({
      kind: "verification.ran",
      at,
      task,
      name: r.name,
      tier: r.tier,
      passed: r.passed,
      command: commandOf(r),
      ...(r.passed ? {} : { failing: r.failedTests.length, fingerprint: failureOf(r) }),
    })),
    {
      kind: "verification.ran",
      at,
      task,
      name: verdictName(level, task),
      passed,
      score: passed ? 1 : 0,
      fingerprint: before,
    },
  ];
  return events;
}
