/** The evidence report of a run: what each task did and proved, and each clause of the done proof. */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { doneProof, outcomeOf, type OutcomeKind } from "../control/index.js";
import type {
  CheckResult,
  DoneProof,
  Evidence,
  HunkWitness,
  JudgeChanges,
  RunEvent,
  RunState,
  TaskStatus,
} from "../control/types.js";
import type { GuardAnswer } from "./run-guard.js";
import type { ReadTrace, RunMeta } from "./run-trace.js";
import { counted } from "../../base/text/plural.js";

/** One agent iteration of a task, as the report tells it. */
export interface ReportAttempt {
  attempt: number;
  mode: "implement" | "fix";
  outcome: string;
  turns: number;
  tokens: number;
  costUsd: number;
  linesChanged: number;
  summary: string;
  checks: { name: string; tier: string; passed: boolean; skipped: boolean; failedTests: string[] }[];
}

/** One task in the report. */
export interface ReportTask {
  id: string;
  title: string;
  kind: string;
  status: TaskStatus;
  permanent: boolean;
  reason: string | null;
  noop: boolean;
  /** What its evidence amounts to (see Evidence); absent while it is not done. */
  evidence: Evidence | null;
  /** Its counterfactual: the files set aside and the checks that went red without them. */
  witness: { setAside: string[]; red: string[] } | null;
  /** What its agent did to what judges the work, each undone by reins. */
  tampering: string[];
  /** Judges its agent changed (tests, fixtures, runner configuration), their diff, and who approved. */
  judgeChanges: JudgeChanges | null;
  /** The judges its proof used as they were when it started (the first 50, and how many). */
  judgesKept: { files: string[]; total: number } | null;
  /** Its hunk tier: hunks no check witnesses alone, and those not tried. */
  hunks: HunkWitness | null;
  /** Why it is proven or not, one line. */
  why: string;
  commit: string | null;
  tokens: number;
  costUsd: number;
  attempts: ReportAttempt[];
  /** The last checks, with their evidence. */
  checks: {
    name: string;
    tier: string;
    passed: boolean;
    skipped: boolean;
    exitCode: number | null;
    failedTests: string[];
    tests?: { passed: number; failed: number };
  }[];
  /** What the guards said while the task ran: stops and advice. */
  interventions: string[];
}

/** The report as JSON (report.json); report.md says the same for a person. */
export interface Report {
  run: string;
  plan: string;
  agent: string;
  branch: string;
  base: string;
  /** The run's outcome (see OutcomeKind): `proven` only when every done task's checks witnessed its change. */
  status: OutcomeKind;
  /** The outcome's first cause, one line. */
  why: string;
  iterations: number;
  tokens: number;
  costUsd: number;
  tasks: ReportTask[];
  /** Each time the spec drifted: the sections that changed and the tasks implementing them, by step. */
  drift: { step: number; sections: string[]; tasks: string[] }[];
  proof: DoneProof;
  /**
   * Whether the agent worked in a box, as said when the run last started or resumed
   * (docs/driven-boundary.md); null for a run of an older reins.
   */
  boundary: string | null;
}

function checksOf(results: CheckResult[]): ReportAttempt["checks"] {
  return results.map((c) => ({
    name: c.name,
    tier: c.tier,
    passed: c.passed,
    skipped: c.skipped === true,
    failedTests: c.failedTests.slice(0, 20),
  }));
}

/**
 * Builds the report from the run's state and its trace. The proof is the core's, taken as it holds once
 * this report exists (its last clause is the report itself).
 */
export function buildReport(
  meta: RunMeta,
  state: RunState,
  trace: Pick<ReadTrace, "steps" | "io" | "boxes">,
): Report {
  const attempts = new Map<string, ReportAttempt[]>();
  const interventions = new Map<string, string[]>();
  const taskOfKey = new Map<string, string>();
  const modeOfKey = new Map<string, "implement" | "fix">();
  const drift: Report["drift"] = [];
  for (const step of trace.steps) {
    for (const { key, action } of step.actions) {
      if ("task" in action) taskOfKey.set(key, action.task);
      if (action.kind === "run_agent") modeOfKey.set(key, action.mode);
    }
    const event: RunEvent = step.event;
    if (event.kind === "spec.changed" && !step.decisions.some((d) => d.kind === "ignored"))
      drift.push({ step: step.n, sections: event.sections, tasks: event.tasks });
    if (event.kind === "agent.finished") {
      const list = attempts.get(event.task) ?? [];
      list.push({
        attempt: event.attempt,
        mode: modeOfKey.get(step.key) ?? "implement",
        outcome: event.outcome,
        turns: event.turns,
        tokens: event.tokens,
        costUsd: event.costUsd,
        linesChanged: event.linesChanged,
        summary: event.summary.slice(0, 500),
        checks: [],
      });
      attempts.set(event.task, list);
    } else if (event.kind === "checks.ran") {
      const last = attempts.get(event.task)?.at(-1);
      last?.checks.push(...checksOf(event.results));
    }
  }
  for (const [key, lines] of trace.io) {
    const task = taskOfKey.get(key);
    if (task === undefined) continue;
    for (const line of lines) {
      if (!line.op.startsWith("guard.") || line.op === "guard.status") continue;
      const answer = line.result as Partial<GuardAnswer> | null;
      const said = [
        ...(answer?.stop != null ? [`stop: ${answer.stop}`] : []),
        ...(answer?.advice ?? []).map((a) => `advice: ${a}`),
      ];
      if (said.length > 0) interventions.set(task, [...(interventions.get(task) ?? []), ...said]);
    }
  }

  const tasks: ReportTask[] = state.order
    .filter((id) => state.tasks[id] !== undefined)
    .map((id) => {
      const t = state.tasks[id];
      const node = state.nodes[id];
      if (t === undefined || node === undefined) throw new Error(`task ${id} missing from the state`);
      return {
        id,
        title: node.title,
        kind: node.kind,
        status: t.status,
        permanent: t.permanent,
        reason: t.reason,
        noop: t.noop,
        evidence: t.status === "done" ? (t.evidence ?? "unverified") : null,
        witness: t.witness ?? null,
        tampering: t.tampering ?? [],
        judgeChanges: t.judgeChanges ?? null,
        judgesKept: t.judgesKept ?? null,
        hunks: t.hunks ?? null,
        why: "",
        commit: t.commit,
        tokens: t.tokens,
        costUsd: t.costUsd,
        attempts: attempts.get(id) ?? [],
        checks: t.lastChecks.map((c) => ({
          name: c.name,
          tier: c.tier,
          passed: c.passed,
          skipped: c.skipped === true,
          exitCode: c.exitCode,
          failedTests: c.failedTests.slice(0, 20),
          ...(c.tests !== undefined ? { tests: c.tests } : {}),
        })),
        interventions: [...new Set(interventions.get(id) ?? [])].slice(0, 20),
      };
    });
  // The state as it is once this report exists: written, and no longer in flight.
  const written: RunState = {
    ...state,
    reportWritten: true,
    inFlight: Object.fromEntries(
      Object.entries(state.inFlight).filter(([, kind]) => kind !== "write_report"),
    ),
  };
  const proof = doneProof(written);
  const outcome = outcomeOf(written, state.finished ?? { proven: proof.holds });
  for (const task of tasks) task.why = whyOf(task, state.settings.witness);
  return {
    run: meta.run,
    plan: meta.plan,
    agent: meta.agent,
    branch: meta.branch,
    base: meta.base,
    status: outcome.kind,
    why: outcome.cause,
    iterations: state.iterations,
    tokens: tasks.reduce((n, t) => n + t.tokens, 0),
    costUsd: Math.round(tasks.reduce((n, t) => n + t.costUsd, 0) * 1e6) / 1e6,
    tasks,
    drift,
    proof,
    boundary: trace.boxes?.at(-1) ?? null,
  };
}

const mark = (ok: boolean) => (ok ? "✔" : "✘");

/** What a task's evidence rests on, for the report. */
function evidenceNote(t: ReportTask): string {
  const aside = t.witness?.setAside ?? [];
  const list = (files: readonly string[]) => files.map((f) => `\`${f}\``).join(", ");
  switch (t.evidence) {
    case "witnessed":
      return `: with its change to ${list(aside)} set aside, ${t.witness?.red.join(", ")} went red`;
    case "changed_judges":
      return ": its checks pass only with its agent's change to what judges them; with the judges as they were they fail";
    case "unwitnessed":
      return aside.length === 0
        ? ": it changed no file outside its tests and judges, so no check could see its change"
        : `: its checks still pass with its change to ${list(aside)} set aside`;
    case "already_done":
      return ": the checks that name it passed before any change";
    case "no_behaviour":
      return ": the plan says it changes no behaviour";
    case "unverified":
      return ": no check ran for it";
    default:
      return "";
  }
}

/** Why a task is proven or not, one line: its evidence, its judges, its hunks. */
function whyOf(t: ReportTask, witness: "change" | "hunks"): string {
  if (t.status !== "done") return `not proven: it is ${t.status}`;
  if (t.tampering.length > 0) return "not proven: its agent touched what judges the work (undone)";
  const changed = t.judgeChanges;
  const hunksMissed = (t.hunks?.unwitnessed.length ?? 0) + (t.hunks?.untried ?? 0);
  if (t.evidence === "changed_judges")
    return changed?.approved != null
      ? `proven on ${changed.approved.by}'s approval: its checks pass only with its agent's change to their judges`
      : "not proven: its checks pass only with its agent's change to their judges, awaiting a person's approval";
  if (t.evidence === "unwitnessed" || t.evidence === "unverified" || t.evidence === null)
    return `not proven: ${t.evidence ?? "unverified"}`;
  if (changed !== null && changed.approved === null)
    return "not proven yet: witnessed with the judges as they were, but its agent changed judges, awaiting a person's approval";
  if (witness === "hunks" && hunksMissed > 0)
    return `not proven: ${hunksMissed} hunk(s) of its change no check witnesses on its own (witness: hunks)`;
  const note = hunksMissed > 0 ? `; ${hunksMissed} hunk(s) no check witnesses on its own (reported)` : "";
  return `proven: ${t.evidence}${changed !== null ? ` (its changed judges approved by ${changed.approved?.by ?? "?"})` : ""}${note}`;
}

/** The judges a task's proof used as they were, and those its agent changed with their diff. */
function judgesLines(t: ReportTask): string[] {
  const out: string[] = [];
  const kept = t.judgesKept;
  if (kept !== null)
    out.push(
      `- judges used as they were when it started (${kept.total}): ${kept.files.map((f) => `\`${f}\``).join(", ") || "none"}${kept.total > kept.files.length ? ` and ${kept.total - kept.files.length} more` : ""}`,
    );
  const changed = t.judgeChanges;
  if (changed === null) return out;
  const files = changed.files.map((f) => `\`${f}\``).join(", ");
  const state =
    changed.approved === null
      ? "**awaiting a person's approval**"
      : `approved by ${changed.approved.by} (${changed.approved.reason})`;
  const how = changed.passedAsTheyWere
    ? "its checks pass with the judges as they were too"
    : "its checks pass only with this change";
  const fence = changed.diff.includes("```") ? "~~~~" : "```";
  out.push(
    `- judges changed by its agent: ${files}, ${state}; ${how}`,
    "",
    `${fence}diff`,
    changed.diff.trimEnd(),
    fence,
    "",
  );
  return out;
}

/** The hunks of a task's change no check witnesses on its own, for the report. */
function hunkLines(t: ReportTask): string[] {
  const h = t.hunks;
  if (h === null) return [];
  const missed = h.unwitnessed.map(
    (u) => `  - \`${u.file}\` lines ${u.lines}${u.context !== "" ? ` (in \`${u.context}\`)` : ""}`,
  );
  return [
    `- hunks: ${h.total}, ${h.unwitnessed.length} no check witnesses on its own${h.untried > 0 ? `, ${h.untried} not tried (the cap per task or the run's hunk budget)` : ""}; ${h.ran} check run(s)`,
    ...missed,
  ];
}

/** The report for a person, in markdown. */
export function reportMarkdown(report: Report): string {
  const out: string[] = [
    `# reins run ${report.run}`,
    "",
    report.status === "proven"
      ? `**Done, proven.** ${report.why}.`
      : `**${report.status[0]?.toUpperCase()}${report.status.slice(1)}: not proven.** ${report.why}.`,
    "",
    `- plan: \`${report.plan}\``,
    `- agent: ${report.agent}`,
    `- branch: \`${report.branch}\` (from ${report.base.slice(0, 12)})`,
    `- iterations: ${report.iterations}; tokens: ${report.tokens.toLocaleString("en")}; cost: $${report.costUsd.toFixed(4)}`,
    ...(report.boundary != null
      ? [`- boundary: ${report.boundary.startsWith("not") ? `**${report.boundary}**` : report.boundary}`]
      : []),
    "",
    "## Done proof",
    "",
    "| clause | holds | evidence |",
    "| --- | --- | --- |",
    ...report.proof.clauses.map(
      (c) => `| ${c.name} | ${mark(c.holds)} | ${c.evidence.replace(/\|/g, "\\|")} |`,
    ),
    "",
  ];
  if (report.drift.length > 0) {
    out.push("## Spec drift", "");
    for (const d of report.drift)
      out.push(
        `- step ${d.step}: ${d.sections.map((s) => `\`${s}\``).join(", ")} changed; tasks: ${d.tasks.join(", ")}`,
      );
    out.push("");
  }
  out.push("## Tasks");
  for (const t of report.tasks) {
    const status = t.status === "failed" ? `failed (${t.permanent ? "permanent" : "retryable"})` : t.status;
    out.push(
      "",
      `### ${t.id}: ${t.title}`,
      "",
      `- status: **${status}**${t.noop ? " (its checks already passed: closed without calling the agent)" : ""}${t.reason !== null ? ` (${t.reason})` : ""}`,
      ...(t.evidence !== null ? [`- evidence: **${t.evidence}**${evidenceNote(t)}`] : []),
      `- ${t.why}`,
      ...t.tampering.map((line) => `- **undone**: ${line}`),
      ...judgesLines(t),
      ...hunkLines(t),
      `- commit: ${t.commit !== null ? `\`${t.commit.slice(0, 12)}\`` : "none"}`,
      `- tokens: ${t.tokens.toLocaleString("en")}; cost: $${t.costUsd.toFixed(4)}`,
    );
    if (t.checks.length > 0) {
      out.push(`- checks:`);
      for (const c of t.checks)
        out.push(
          `  - ${mark(c.passed)} ${c.name} (${c.tier})${c.skipped ? " skipped: the run's slow-check budget was spent" : ""}${c.tests !== undefined ? `: ${c.tests.passed} passed, ${c.tests.failed} failed` : ""}${c.failedTests.length > 0 ? `; failing: ${c.failedTests.join(", ")}` : ""}`,
        );
    }
    if (t.attempts.length > 0) {
      out.push(`- attempts:`);
      for (const a of t.attempts) {
        const checks = a.checks
          .map((c) => `${c.name} ${c.skipped ? "skipped" : c.passed ? "passed" : "failed"}`)
          .join(", ");
        out.push(
          `  ${a.attempt}. ${a.mode}: ${a.outcome}, ${counted(a.turns, "turn")}, ${counted(a.tokens, "token")}, ${counted(a.linesChanged, "line")} changed${checks !== "" ? `; checks: ${checks}` : ""}`,
        );
      }
    }
    if (t.interventions.length > 0) {
      out.push(`- guard interventions:`);
      for (const line of t.interventions) out.push(`  - ${line}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** Writes report.json and report.md into the run's folder (each whole, by rename); returns report.md's path. */
export function writeReportFiles(dir: string, report: Report): string {
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(`${path}.partial`, text);
    renameSync(`${path}.partial`, path);
    return path;
  };
  write("report.json", `${JSON.stringify(report, null, 2)}\n`);
  return write("report.md", reportMarkdown(report));
}
