/** The second half of `reins demo`: a short plan driven by `reins run` with a scripted agent. */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import { runnerFor } from "../agents/index.js";
import { progressWriter } from "../drive/progress.js";
import { startRun, type RunOutcome } from "../drive/run.js";
import { parsePlan } from "../plan/index.js";

/** The demo's plan: a greeting module in two components, one task depending on another's output. */
const PLAN = `version: 1
name: demo
checks:
  syntax:
    command: 'for f in *.sh; do [ -e "$f" ] || continue; sh -n "$f" || exit 1; done'
    tier: fast
  docs: { command: "grep -q 'sh greet.sh' README.md", tier: medium }
  greet: { command: "sh greet.sh | grep -qx 'hello, world'", tier: medium }
  shout: { command: "sh shout.sh | grep -qx 'HELLO, WORLD'", tier: medium }
modules:
  - id: greeting
    title: Greet the world
    components:
      - id: core
        title: The greeting
        tasks:
          - id: greet
            title: Print "hello, world"
            acceptance: greet.sh prints exactly "hello, world"
            checks: [greet]
          - id: docs
            title: Say how to run it
            acceptance: README.md shows the command that prints the greeting
            checks: [docs]
      - id: extras
        title: Louder
        tasks:
          - id: shout
            title: Print the greeting in capitals
            acceptance: shout.sh prints the greeting of greet.sh in capitals
            checks: [shout]
            deps: [greet]
`;

/**
 * The scripted agent: its first try at "greet" has a typo (the check goes red, so the next iteration is
 * fix-only with the failing output); everything else is right the first time.
 */
const AGENT = `#!/bin/sh
case "$REINS_TASK:$REINS_ATTEMPT" in
  greet:1) echo 'echo "hello, wrold"' > greet.sh ;;
  greet:*) echo 'echo "hello, world"' > greet.sh ;;
  shout:*) echo 'sh greet.sh | tr a-z A-Z' > shout.sh ;;
  docs:*) printf '# Greeting\n\nRun: sh greet.sh\n' > README.md ;;
esac
echo '{"reins":{"tokens":1200,"costUsd":0.004,"turns":3}}'
`;

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, {
    cwd,
    stdio: "ignore",
    env: { ...process.env, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0" },
  });
}

/**
 * Creates a throwaway git project with the plan and runs it to the end with the scripted agent, recording
 * into `store` (so `reins serve` shows the run). Writes progress lines through `write`.
 */
export async function demoPlanRun(
  store: Store,
  policy: Policy,
  write: (text: string) => void,
): Promise<RunOutcome> {
  const root = mkdtempSync(join(tmpdir(), "reins-demo-run-"));
  git(root, "init", "-q", "-b", "main");
  git(root, "config", "user.email", "demo@reins.local");
  git(root, "config", "user.name", "reins demo");
  writeFileSync(join(root, ".gitignore"), ".reins/\n");
  writeFileSync(join(root, "reins.plan.yaml"), PLAN);
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "the plan");
  const agent = join(mkdtempSync(join(tmpdir(), "reins-demo-agent-")), "agent.sh");
  writeFileSync(agent, AGENT);
  chmodSync(agent, 0o755);
  const plan = parsePlan(PLAN, "reins.plan.yaml");
  return startRun({
    root,
    store,
    policy,
    runner: runnerFor(`cmd:sh ${agent}`),
    plan: { file: "reins.plan.yaml", nodes: plan.nodes, checks: plan.checks, settings: plan.settings },
    progress: progressWriter(write, false),
  });
}
