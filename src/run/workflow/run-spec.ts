/**
 * The shell of `reins run --spec`: gathers the facts, assesses them (never a saved step), and carries out
 * the step they call for: drafts the spec and stops at the gate, refuses past the gate until the spec as it
 * is now is approved, plans, and finally hands the building to `reins run` as a decision (start or resume).
 */
import { existsSync, readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { ReinsError } from "../../base/core/errors.js";
import { dirtyTreeLine } from "../../base/config/local-files.js";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import { checkpointFrom } from "../drive/checkpoint.js";
import type { AgentRunner } from "../agents/runner.js";
import { firstLine } from "../../base/text/first-line.js";
import { Git } from "../git/git.js";
import type { RunGuard } from "../drive/run-guard.js";
import { loadPlan } from "../plan/index.js";
import { hashedSpec, hashSection, specPath } from "../spec/read.js";
import { findSection } from "../spec/sections.js";
import { specFileKey } from "../spec/section-hashes.js";
import { approvalsOf, markDrafting } from "./approval.js";
import { assess, planSpecProblems, type Assessment, type PlanFact, type SpecFact } from "./assess.js";
import { draftPrompt, planPrompt } from "./prompts.js";

/** What `reins run --spec` needs. */
export interface SpecRunOptions {
  root: string;
  store: Store;
  /** The policy the spec's scope is written with (the marks of a drafting). */
  policy: Policy;
  /** The spec, relative to the project. */
  spec: string;
  /** The plan file, absolute. */
  plan: string;
  /** What to build: needed only when the spec does not exist yet. */
  request?: string;
  /** The agent for the workflow's own iterations (drafting and planning). */
  runner: AgentRunner;
  /**
   * Where those iterations are charged (`run:workflow`): a paused budget or an open breaker keeps the agent
   * from being started.
   */
  guard: RunGuard;
  /** The time of an iteration's end, for its usage event (ms since the epoch). */
  now: () => number;
  agentTimeoutMs: number;
  /** How long its agent may print nothing before it is stopped as hung. */
  agentIdleMs: number;
  signal?: AbortSignal;
  /** Progress, one line each. */
  say: (line: string) => void;
  /**
   * The box its agent works in (bwrap and its arguments, see run/drive/agent-box.ts): the spec and the plan stay
   * writable, since writing them is its work. @default none
   */
  box?: readonly string[];
}

/** How the workflow's part of a start ended: waiting at the gate, failed, done already, or building. */
export type SpecStep =
  | { kind: "gate"; spec: string; hash: string; drafted: boolean; assessment: Assessment }
  | { kind: "failed"; message: string }
  | { kind: "done"; assessment: Assessment }
  | { kind: "build"; plan: string; resume: string | null; assessment: Assessment };

/** The spec file as it is on disk now; a usage error when it is outside the project. */
export function specFact(root: string, spec: string): SpecFact {
  const path = specPath(root, spec);
  if (!existsSync(path)) return { path: spec, exists: false };
  const text = readFileSync(path, "utf8");
  return {
    path: spec,
    exists: true,
    hash: hashSection(text),
    sections: hashedSpec(spec, text).sections.map((s) => s.id),
  };
}

/** The plan as it is on disk now: missing, invalid (with the first problem), or valid for `spec`. */
export function planFact(root: string, plan: string, spec: string): PlanFact {
  const path = relative(root, plan);
  if (!existsSync(plan)) return { path, exists: false };
  try {
    const loaded = loadPlan(plan);
    const sections = hashedSpec(spec, readFileSync(specPath(root, spec), "utf8")).sections;
    const problems = planSpecProblems(
      loaded.nodes,
      spec,
      sections.map((s) => s.id),
      (named) => specFileKey(named) === specFileKey(spec),
      (name) => findSection(sections, name) !== undefined,
    );
    if (problems.length > 0) return { path, exists: true, valid: false, error: `${path}: ${problems[0]!}` };
    return { path, exists: true, valid: true, nodes: loaded.nodes };
  } catch (error) {
    if (!ReinsError.is(error)) throw error;
    return { path, exists: true, valid: false, error: firstLine(error.message) };
  }
}

/**
 * Task ids shown done: by a commit a run of the plan recorded for them (in its checkpoint, never a
 * `Reins-Task:` trailer alone, which anyone can write) that is on the current branch, and every done task
 * of the newest proven run of the plan.
 */
async function doneTasks(store: Store, git: Git, planPath: string): Promise<string[]> {
  const done = new Set<string>();
  let provenSeen = false;
  for (const run of await store.runs()) {
    const stored = await store.run(run.id);
    if (stored === null) continue;
    const { meta, state } = checkpointFrom(stored);
    if (meta.plan !== planPath) continue;
    for (const [id, task] of Object.entries(state.tasks)) {
      if (task.status !== "done") continue;
      if (task.commit !== null && (await git.isAncestor(task.commit, "HEAD"))) done.add(id);
      else if (run.status === "proven" && !provenSeen) done.add(id);
    }
    if (run.status === "proven") provenSeen = true;
  }
  return [...done];
}

/** Gathers the facts and assesses them. */
export async function assessProject(
  options: Pick<SpecRunOptions, "root" | "store" | "spec" | "plan">,
): Promise<Assessment> {
  const spec = specFact(options.root, options.spec);
  const plan = spec.exists
    ? planFact(options.root, options.plan, options.spec)
    : { path: relative(options.root, options.plan), exists: false as const };
  const { approvals, duringDrafting } = await approvalsOf(options.store, options.spec);
  return assess({
    spec,
    approvals,
    duringDrafting,
    plan,
    done: await doneTasks(options.store, new Git(options.root), relative(options.root, options.plan)),
  });
}

async function assertClean(git: Git, what: string): Promise<void> {
  const dirty = await git.dirtyFiles();
  if (dirty.length > 0) throw new ReinsError("usage", dirtyTreeLine(git.cwd, dirty, `reins ${what}`));
}

async function agentStep(
  options: SpecRunOptions,
  step: "draft-spec" | "plan",
  attempt: number,
  prompt: string,
): Promise<string | null> {
  const paused = await options.guard.paused();
  if (paused !== null) return paused;
  const result = await options.runner.run({
    run: "workflow",
    task: `workflow:${step}`,
    attempt,
    mode: "implement",
    prompt,
    cwd: options.root,
    env: {
      REINS_WORKFLOW_STEP: step,
      REINS_SPEC: options.spec,
      REINS_PLAN: relative(options.root, options.plan),
    },
    timeoutMs: options.agentTimeoutMs,
    idleMs: options.agentIdleMs,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.box !== undefined ? { box: options.box } : {}),
  });
  // A stop this spend causes (a budget used up) keeps the next step's agent from starting; the step that
  // spent it is done and its work is kept.
  await options.guard.usage(
    `workflow:${step}`,
    {
      attempt,
      tokens: result.tokens,
      costUsd: result.costUsd,
      files: [],
      lines: 0,
      hooked: options.runner.hooked === true,
    },
    options.now(),
  );
  return result.outcome === "ok" ? null : `the agent ended ${result.outcome}: ${firstLine(result.summary)}`;
}

/** Step 1: the agent drafts the spec, reins commits it. */
async function draft(options: SpecRunOptions, git: Git): Promise<SpecStep | null> {
  if (options.request === undefined || options.request.trim() === "")
    throw new ReinsError(
      "usage",
      `no spec ${options.spec} yet: say what to build with --request "...", or write the spec yourself`,
    );
  await assertClean(git, "drafts the spec");
  options.say(`requirements: the agent drafts ${options.spec}`);
  // What the agent approves while it drafts is the agent's approval, not a person's: it never counts.
  await markDrafting(options.store, options.policy, options.spec, "started", options.now());
  let failed: string | null;
  try {
    failed = await agentStep(options, "draft-spec", 1, draftPrompt(options.spec, options.request));
  } finally {
    await markDrafting(options.store, options.policy, options.spec, "ended", options.now());
  }
  if (failed !== null) return { kind: "failed", message: `drafting ${options.spec}: ${failed}` };
  const spec = specFact(options.root, options.spec);
  if (!spec.exists) return { kind: "failed", message: `the agent did not write ${options.spec}` };
  if (spec.sections.length === 0)
    return { kind: "failed", message: `the agent's ${options.spec} has no sections (## headings)` };
  await git.commitAll(`spec: draft ${options.spec}\n\nReins-Workflow: draft-spec`);
  options.say(`requirements: ${options.spec} drafted and committed, ${spec.sections.length} section(s)`);
  return null;
}

/** Steps 2 to 5: the agent writes the plan, reins checks it (one retry with the problem), then commits it. */
async function planWork(options: SpecRunOptions, git: Git, error: string | null): Promise<SpecStep | null> {
  await assertClean(git, "plans");
  const planPath = relative(options.root, options.plan);
  let problem = error;
  for (let attempt = 1; attempt <= 2; attempt++) {
    options.say(`planning: the agent writes ${planPath}${attempt > 1 ? " again" : ""}`);
    const spec = specFact(options.root, options.spec);
    const failed = await agentStep(
      options,
      "plan",
      attempt,
      planPrompt({
        spec: options.spec,
        plan: planPath,
        sections: spec.exists ? spec.sections : [],
        text: readFileSync(resolve(options.root, options.spec), "utf8"),
        error: problem,
      }),
    );
    if (failed !== null) return { kind: "failed", message: `planning: ${failed}` };
    const plan = planFact(options.root, options.plan, options.spec);
    if (plan.exists && plan.valid) {
      await git.commitAll(`plan: ${planPath} for ${options.spec}\n\nReins-Workflow: plan`);
      options.say(`planning: ${planPath} committed, ${plan.nodes.length} node(s)`);
      return null;
    }
    problem = plan.exists ? plan.error : `the agent did not write ${planPath}`;
  }
  return {
    kind: "failed",
    message: `the plan is still invalid after a retry: ${problem ?? ""}; fix and commit ${planPath}, or remove it, and start again`,
  };
}

/** An unfinished run of the plan, to resume rather than start again. */
async function openRun(store: Store, planPath: string): Promise<string | null> {
  for (const run of await store.runs()) {
    if (run.status !== "running" && run.status !== "paused") continue;
    const stored = await store.run(run.id);
    if (stored !== null && checkpointFrom(stored).meta.plan === planPath) return run.id;
  }
  return null;
}

/**
 * One start of the workflow: assesses, acts on what the assessment calls for, and assesses again after
 * each step it took, until the gate holds, a step failed, every task is done, or building is next.
 */
export async function advanceSpec(options: SpecRunOptions): Promise<SpecStep> {
  const git = new Git(options.root);
  if (!(await git.isRepo()))
    throw new ReinsError(
      "usage",
      `${options.root} is not a git repository: the workflow commits its steps (git init)`,
    );
  // A start killed while its agent drafted left the drafting open: it ends now (approvals recorded
  // meanwhile stay void, and a person approves again).
  if ((await approvalsOf(options.store, options.spec)).draftingOpen)
    await markDrafting(options.store, options.policy, options.spec, "ended", options.now());
  let drafted = false;
  let planned = false;
  for (;;) {
    const assessment = await assessProject(options);
    options.say(
      `assessed: ${assessment.phase}, step ${assessment.step}${assessment.missing.length > 0 ? `; missing: ${assessment.missing.join("; ")}` : ""}`,
    );
    const spec = specFact(options.root, options.spec);
    if (assessment.phase === "requirements") {
      if (!spec.exists) {
        if (drafted) return { kind: "failed", message: `the agent did not write ${options.spec}` };
        const failed = await draft(options, git);
        if (failed !== null) return failed;
        drafted = true;
        continue;
      }
      return { kind: "gate", spec: options.spec, hash: spec.hash, drafted, assessment };
    }
    // The start that drafted the spec stops at the gate whatever the store says: a person reads the spec
    // and starts the workflow again.
    if (drafted && spec.exists)
      return { kind: "gate", spec: options.spec, hash: spec.hash, drafted, assessment };
    if (assessment.phase === "planning") {
      if (planned) return { kind: "failed", message: assessment.missing.join("; ") };
      const plan = planFact(options.root, options.plan, options.spec);
      const failed = await planWork(options, git, plan.exists && !plan.valid ? plan.error : null);
      if (failed !== null) return failed;
      planned = true;
      continue;
    }
    const planPath = relative(options.root, options.plan);
    const resume = await openRun(options.store, planPath);
    if (resume === null && assessment.step === "done") return { kind: "done", assessment };
    return { kind: "build", plan: options.plan, resume, assessment };
  }
}
