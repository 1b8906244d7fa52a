/** How a run came out, in one word and its first cause: what `reins run`'s last line and its report say. */
import { doneProof } from "./done-proof.js";
import type { RunState } from "./types.js";

/**
 * - `proven`: the done proof holds and every done task's checks witnessed its change;
 * - `failed`: a task failed for good;
 * - `paused`: a guard paused the run until a person acts;
 * - `tampered`: an agent touched what judges its work (a commit, a checkout, a branch, a git hook); reins
 *   undid it, and a person must look;
 * - `unverified`: a task was done with no check verifying it (a run started with `--unverified`);
 * - `unwitnessed`: a task's checks pass with its change set aside, or it changed nothing they could see;
 * - `unwitnessed`, too, under `witness: hunks`: a hunk of a task's change no check witnesses on its own;
 * - `awaiting_approval`: a task's agent changed what judges it (its tests, their fixtures, the runner's
 *   configuration); a person approves the change (`reins approve --task`) and resumes the run;
 * - `unproven`: another clause of the done proof does not hold;
 * - `interrupted`: the run stopped before it finished (Ctrl-C, a crash); `--resume` goes on.
 */
export type OutcomeKind =
  | "proven"
  | "failed"
  | "paused"
  | "tampered"
  | "unverified"
  | "unwitnessed"
  | "awaiting_approval"
  | "unproven"
  | "interrupted";

/** An outcome and its first cause, one line. */
export interface Outcome {
  kind: OutcomeKind;
  cause: string;
}

const ids = (list: readonly string[]) =>
  list.length <= 5 ? list.join(", ") : `${list.slice(0, 5).join(", ")} and ${list.length - 5} more`;

/**
 * The outcome of a run in `state`, which the core finished (`finished`) or not (null). Pure. The first of
 * failed, paused, tampered, unverified, unwitnessed, awaiting_approval and unproven that applies wins (an
 * approval does not help a task its checks do not witness); `proven` only when none does.
 */
export function outcomeOf(state: RunState, finished: { proven: boolean } | null): Outcome {
  const done = state.order.filter((id) => state.tasks[id]?.status === "done");
  if (finished === null)
    return state.paused !== null
      ? { kind: "paused", cause: state.paused }
      : {
          kind: "interrupted",
          cause: `go on with \`reins run --resume ${state.run}\``,
        };
  const failed = state.order.filter((id) => state.tasks[id]?.status === "failed");
  if (failed.length > 0) {
    const first = state.tasks[failed[0]!];
    return {
      kind: "failed",
      cause: `task ${failed[0]} failed${first?.reason ? `: ${first.reason}` : ""}${failed.length > 1 ? ` (and ${ids(failed.slice(1))})` : ""}`,
    };
  }
  if (state.paused !== null) return { kind: "paused", cause: state.paused };
  const tampered = state.order.filter((id) => (state.tasks[id]?.tampering?.length ?? 0) > 0);
  if (tampered.length > 0)
    return {
      kind: "tampered",
      cause: `task ${tampered[0]}: ${state.tasks[tampered[0]!]?.tampering?.[0] ?? ""}${tampered.length > 1 ? ` (also ${ids(tampered.slice(1))})` : ""}`,
    };
  const by = (evidence: string) =>
    done.filter((id) => (state.tasks[id]?.evidence ?? "unverified") === evidence);
  const unverified = by("unverified");
  if (unverified.length > 0)
    return { kind: "unverified", cause: `no check verified task(s) ${ids(unverified)}` };
  const unwitnessed = by("unwitnessed");
  if (unwitnessed.length > 0) {
    const first = state.tasks[unwitnessed[0]!];
    const how =
      first?.witness === undefined || first.witness.setAside.length === 0
        ? "it changed no file outside its tests and judges, so no check could see its change"
        : `its checks still pass with its change to ${ids(first.witness.setAside)} set aside`;
    const judged =
      first?.judgeChanges !== undefined ? `; its agent also changed ${ids(first.judgeChanges.files)}` : "";
    return {
      kind: "unwitnessed",
      cause: `task ${unwitnessed[0]}: ${how}${judged}${unwitnessed.length > 1 ? ` (also ${ids(unwitnessed.slice(1))})` : ""}`,
    };
  }
  const missed = done.flatMap((id) => {
    const hunks = state.tasks[id]?.hunks;
    return hunks === undefined ? [] : [{ id, hunks, count: hunks.unwitnessed.length + hunks.untried }];
  });
  const strict = missed.filter((m) => m.count > 0);
  if (state.settings.witness === "hunks" && strict.length > 0) {
    const { id, hunks, count } = strict[0]!;
    const where = hunks.unwitnessed
      .slice(0, 3)
      .map((h) => `${h.file}:${h.lines}${h.context !== "" ? ` (${h.context})` : ""}`);
    const untried =
      hunks.untried > 0 ? `${hunks.untried} not tried (the cap per task or the run's hunk budget)` : "";
    return {
      kind: "unwitnessed",
      cause: `task ${id}: ${count} of the ${hunks.total} hunks of its change no check witnesses on its own (witness: hunks): ${[...where, untried].filter((w) => w !== "").join(", ")}${strict.length > 1 ? ` (also ${ids(strict.slice(1).map((m) => m.id))})` : ""}`,
    };
  }
  const awaiting = done.filter((id) => {
    const edited = state.tasks[id]?.judgeChanges;
    return edited !== undefined && edited.approved === null;
  });
  if (awaiting.length > 0) {
    const first = awaiting[0]!;
    const changes = state.tasks[first]?.judgeChanges;
    const how =
      changes?.passedAsTheyWere === true
        ? "its checks pass with the judges as they were too"
        : "its checks pass only with that change";
    return {
      kind: "awaiting_approval",
      cause: `task ${first}: its agent changed what judges it (${ids(changes?.files ?? [])}) and ${how}; a person reads the diff in the report, then \`reins approve --run ${state.run} --task ${first} --reason "..."\` and \`reins run --resume ${state.run}\`${awaiting.length > 1 ? ` (also ${ids(awaiting.slice(1))})` : ""}`,
    };
  }
  const proof = doneProof(state);
  if (finished.proven && proof.holds) {
    const count = (evidence: string) => by(evidence).length;
    const approved = by("changed_judges").length;
    const hunks = missed.reduce((n, m) => n + m.count, 0);
    return {
      kind: "proven",
      cause: `every task's checks witnessed its change (${count("witnessed")} witnessed, ${count("already_done")} already done, ${count("no_behaviour")} changing no behaviour${approved > 0 ? `, ${approved} on a person's approval of changed judges` : ""})${hunks > 0 ? `; ${hunks} hunk(s) no check witnesses on its own (see the report)` : ""}`,
    };
  }
  const broken = proof.clauses.find((c) => !c.holds);
  return {
    kind: "unproven",
    cause: broken === undefined ? "the done proof does not hold" : `${broken.name}: ${broken.evidence}`,
  };
}
