/** `reins plan check`: a plan or an imported file validated without running anything. */
import type { Command } from "commander";
import { checkPlan, loadPlan, planCheckText } from "../../run/plan/index.js";
import { type RunContext, PLAN_FILES, findPlan } from "../run-setup.js";

/** Registers `reins plan`. */
export function registerPlanCommand(root: Command, ctx: RunContext): void {
  const { io } = ctx;
  root
    .command("plan")
    .description("plans without running them")
    .command("check")
    .description(
      "validate a plan or an imported file without running anything: the task tree with deps, the checks per task, the notes, and what reins run would do first",
    )
    .argument("[plan]", `the plan (default: the first of ${PLAN_FILES.join(", ")})`)
    .option("--tag <name>", "for a task-master file with several tags: the tag to read (default: master)")
    .option("--json", "print the check as JSON")
    .action((planArg: string | undefined, opts: { tag?: string; json?: boolean }) => {
      const file = findPlan(ctx.loaded().root, io.cwd, planArg);
      const check = checkPlan(loadPlan(file, opts.tag !== undefined ? { tag: opts.tag } : {}));
      io.stdout(opts.json === true ? `${JSON.stringify(check, null, 2)}\n` : planCheckText(check));
      // Runnable as it is: 0; `reins run` would refuse it for want of checks: 1; invalid: 2 (thrown).
      ctx.result.code = check.unchecked.length > 0 ? 1 : 0;
    });
}
