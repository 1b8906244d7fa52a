/**
 * The run as a scope of the guard engine: its tasks, spend and checks are recorded in the store, so the
 * budgets, pools, breaker and dashboard apply to a run as to any agent session.
 */
import { createHash, randomUUID } from "node:crypto";
import type { CheckResult } from "../control/types.js";
import type { Decision } from "../../base/core/decision.js";
import type { ReinsEvent } from "../../base/core/reins-event.js";
import { gradeOf } from "../../base/core/grade.js";
import { scopeSummary } from "../../base/core/summary.js";
import type { Governor } from "../../guard/governor.js";

/** What the guards said of a step: a stop (a person must act) and advice for the agent's next prompt. */
export interface GuardAnswer {
  stop: string | null;
  advice: string[];
}

/** The guard engine, as the driver sees it. */
export interface RunGuard {
  /** The scope the run records in (`run:<id>`). */
  readonly scope: string;
  /** Why the run may not go on (a paused budget, an open breaker), or null. */
  paused(): Promise<string | null>;
  started(agent: string, at: number): Promise<void>;
  taskStarted(task: string, type: string | undefined, at: number): Promise<GuardAnswer>;
  /**
   * An iteration's spend, and its change to the tree as one edit (so the breaker tells a fix that changed
   * something from a retry that changed nothing). `hooked`: the iteration ran reins' hooks, whose session
   * charged the project's pools as it went, so the run's record of the spend charges none.
   */
  usage(
    task: string,
    iteration: {
      attempt: number;
      tokens: number;
      costUsd: number;
      files: string[];
      lines: number;
      hooked: boolean;
    },
    at: number,
  ): Promise<GuardAnswer>;
  verified(task: string, results: CheckResult[], at: number): Promise<GuardAnswer>;
  taskEnded(task: string, status: "done" | "failed" | "canceled", at: number): Promise<GuardAnswer>;
}

/** The command that goes on with a run after a person acted. */
const RESUME = "reins run --resume";

/** How a person lets a paused run go on: the commands to type (`goOn` once the budget or breaker allows). */
export function howToGoOn(scope: string, why: "budget" | "breaker", goOn = RESUME): string {
  return why === "budget"
    ? `extend it with \`reins budget extend ${scope} <tokens> --reason "..."\`, then \`${goOn}\``
    : `reset it with \`reins circuit reset ${scope} --reason "..."\`, then \`${goOn}\``;
}

/** An event before the guard stamps its scope and id (per kind, so each kind keeps its own fields). */
type Unstamped = ReinsEvent extends infer E
  ? E extends ReinsEvent
    ? Omit<E, "scope" | "id">
    : never
  : never;

function answerOf(scope: string, decisions: (Decision | null)[], goOn: string): GuardAnswer {
  const advice: string[] = [];
  let stop: string | null = null;
  for (const decision of decisions) {
    if (decision === null) continue;
    if (gradeOf(decision) === "stop") {
      // The guard's own words say what a person does (extend, reset); the run adds how it goes on then.
      const said = decision.instructions.join(" ");
      const why = decision.results.some((r) => r.guard.startsWith("circuit")) ? "breaker" : "budget";
      stop =
        said === ""
          ? `a guard stopped the run: ${howToGoOn(scope, why, goOn)}`
          : `${said} Then go on with \`${goOn}\`.`;
    } else advice.push(...decision.instructions);
  }
  return { stop, advice: [...new Set(advice)] };
}

/**
 * A guard recording into `run:<run>` through the governor (fail-open with a spool when the store is down);
 * `goOn` is the command its stops tell a person to type once they have acted.
 */
export function runGuard(governor: Governor, run: string, goOn = RESUME): RunGuard {
  const scope = `run:${run}`;
  const record = async (events: Unstamped[]): Promise<GuardAnswer> => {
    const stamped = events.map((e) => ({ ...e, scope, id: randomUUID() }));
    const governed = await governor.record(scope, stamped);
    return answerOf(scope, governed.answers, goOn);
  };
  return {
    scope,
    async paused() {
      const state = await governor.store.state(scope).catch(() => null);
      if (state === null) return null;
      const summary = scopeSummary(state, governor.policy);
      if (summary.breaker.status === "open")
        return `the breaker of ${scope} is open (${summary.breaker.detail ?? summary.breaker.reason ?? "tripped"}): ${howToGoOn(scope, "breaker", goOn)}`;
      if (summary.status === "paused") {
        const line = [...summary.budget, ...(summary.task?.budget ?? [])].find((b) => b.ratio >= 1);
        const what =
          line === undefined
            ? ""
            : ` (${line.resource} ${line.used.toLocaleString("en")} of ${line.limit.toLocaleString("en")})`;
        return `the budget of ${scope} is paused${what}: ${howToGoOn(scope, "budget", goOn)}`;
      }
      return null;
    },
    async started(agent, at) {
      await record([{ kind: "session.started", at, agent }]);
    },
    taskStarted: (task, type, at) =>
      record([{ kind: "task.started", at, task, ...(type !== undefined ? { taskType: type } : {}) }]),
    usage: (task, it, at) =>
      record([
        {
          kind: "usage.recorded",
          at,
          inputTokens: it.tokens,
          costUsd: it.costUsd,
          pricing: "agent",
          ...(it.hooked ? { pools: false as const } : {}),
        },
        ...(it.files.length === 0
          ? []
          : [
              {
                kind: "tool.requested" as const,
                at,
                tool: "reins-iteration",
                // Not a tool call of the agent: the pools' tool-call budgets count the agent's own.
                pools: false as const,
                inputHash: `${task}#${it.attempt}`,
                writes: it.files.slice(0, 50),
                linesChanged: it.lines,
              },
            ]),
      ]),
    verified: (_task, results, at) =>
      record(
        results
          .filter((r) => r.skipped !== true)
          .map((r) => ({
            kind: "verification.ran" as const,
            at,
            name: r.name,
            tier: r.tier,
            passed: r.passed,
            ...(r.passed
              ? {}
              : {
                  failing: r.failedTests.length,
                  fingerprint: createHash("sha256")
                    .update(r.failedTests.length > 0 ? r.failedTests.join("\n") : r.output.slice(-500))
                    .digest("hex")
                    .slice(0, 16),
                }),
          })),
      ),
    taskEnded: (task, status, at) => record([{ kind: "task.ended", at, task, status }]),
  };
}
