/** `reins approve` and `reins workflow`: the human gate of the spec-driven workflow, and the workflow itself. */
import { join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import type { LoadedPolicy } from "../../base/config/load-policy.js";
import { specFileKey } from "../../run/spec/section-hashes.js";
import { approveTask } from "../../run/drive/approvals.js";
import { openStore } from "../../base/store/open.js";
import { recordApproval } from "../../run/workflow/approval.js";
import { stepOf, stepsText, toMermaid, WORKFLOW } from "../../run/workflow/definition.js";
import { assessProject, specFact } from "../../run/workflow/run-spec.js";
import type { Io } from "../io.js";
import { PLAN_FILES } from "../run-setup.js";
import { actor } from "../store-access.js";
import { claimOf, provePerson, withPersonToken } from "../person-proof.js";

/** What the workflow commands need from the program. */
export interface WorkflowContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
}

/** The spec's path relative to the project, from a path given relative to the working directory. */
function specPath(root: string, cwd: string, named: string): string {
  return specFileKey(relative(root, resolve(cwd, named)));
}

interface ApproveOptions {
  reason: string;
  by?: string;
  task?: string;
  run?: string;
  token?: string;
}

/** Registers `approve` and `workflow`. */
export function registerWorkflowCommands(root: Command, ctx: WorkflowContext): void {
  const { io } = ctx;
  withPersonToken(
    root
      .command("approve")
      .description(
        "approve a spec as it is now (the human gate before planning), or with --task what judges a task (its tests, fixtures, runner configuration) as a run's agent changed it: records who, why and what was approved",
      )
      .argument("[spec]", "the spec file", "spec.md")
      .requiredOption("--reason <text>", "why it is approved")
      .option("--by <name>", "who approves (default: your login name)")
      .option("--task <id>", "approve the tests this task's agent changed while red (see the run's report)")
      .option("--run <id>", "with --task: the run (default: the newest one awaiting approval)"),
  ).action(async (named: string, opts: ApproveOptions) => {
    const loaded = ctx.loaded();
    if (opts.run !== undefined && opts.task === undefined)
      throw new ReinsError("usage", "--run goes with --task: which task's edited tests to approve");
    if (opts.task !== undefined) {
      if (opts.reason.trim() === "") throw new ReinsError("usage", "--reason must say why");
      provePerson(loaded.root, claimOf("approve --task", opts.token, io.env));
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        const by = actor(opts.by);
        const request = {
          task: opts.task,
          by,
          reason: opts.reason,
          ...(opts.run !== undefined ? { run: opts.run } : {}),
        };
        const done = await approveTask(store, loaded.policy, loaded.root, request, Date.now());
        io.stdout(
          `approved the judges task ${opts.task} changed (${done.files.join(", ")}) at its commit ${done.commit.slice(0, 12)}, by ${by}: go on with \`reins run --resume ${done.run}\`\n`,
        );
      } finally {
        await store.close();
      }
      return;
    }
    const spec = specPath(loaded.root, io.cwd, named);
    const fact = specFact(loaded.root, spec);
    if (!fact.exists) throw new ReinsError("usage", `no spec ${spec} to approve`);
    if (opts.reason.trim() === "") throw new ReinsError("usage", "--reason must say why");
    provePerson(loaded.root, claimOf("approve", opts.token, io.env));
    const store = await openStore(loaded.storeSpec, loaded.root);
    try {
      const by = actor(opts.by);
      await recordApproval(
        store,
        loaded.policy,
        loaded.root,
        { spec, hash: fact.hash, by, reason: opts.reason },
        Date.now(),
      );
      io.stdout(
        `approved ${spec} as it is now (sha256 ${fact.hash.slice(0, 12)}) by ${by}: an edit to it needs a new approval\n`,
      );
    } finally {
      await store.close();
    }
  });

  root
    .command("workflow")
    .description(
      "the spec-driven workflow's phases and steps; --mermaid draws it; --spec says where a project stands",
    )
    .option("--mermaid", "print the workflow as a Mermaid flowchart")
    .option("--spec <file>", "assess this spec, its approval and the plan now")
    .option("--plan <file>", `the plan, with --spec (default: ${PLAN_FILES[0]})`)
    .option("--json", "print JSON")
    .action(async (opts: { mermaid?: boolean; spec?: string; plan?: string; json?: boolean }) => {
      if (opts.spec === undefined) {
        if (opts.json === true) io.stdout(`${JSON.stringify(WORKFLOW, null, 2)}\n`);
        else io.stdout(opts.mermaid === true ? toMermaid(WORKFLOW) : stepsText(WORKFLOW));
        return;
      }
      const loaded = ctx.loaded();
      const spec = specPath(loaded.root, io.cwd, opts.spec);
      const plan = opts.plan !== undefined ? resolve(io.cwd, opts.plan) : join(loaded.root, PLAN_FILES[0]!);
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        const assessment = await assessProject({ root: loaded.root, store, spec, plan });
        if (opts.json === true) {
          io.stdout(`${JSON.stringify(assessment, null, 2)}\n`);
          return;
        }
        const step =
          assessment.step === "done"
            ? "done: every task is"
            : `${stepOf(WORKFLOW, assessment.step).n}. ${stepOf(WORKFLOW, assessment.step).title}`;
        const lines = [`phase: ${assessment.phase}`, `step: ${step}`];
        lines.push(
          assessment.approval === null
            ? `approval: none for ${spec} as it is now`
            : `approval: by ${assessment.approval.by}${assessment.approval.reason !== null ? ` (${assessment.approval.reason})` : ""}`,
        );
        for (const c of assessment.components)
          lines.push(`component ${c.id}: ${c.done.length} of ${c.tasks.length} task(s) done`);
        for (const m of assessment.missing) lines.push(`missing: ${m}`);
        io.stdout(`${lines.join("\n")}\n`);
      } finally {
        await store.close();
      }
    });
}
