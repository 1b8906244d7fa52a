import { api, enc } from "./api.js";
import { cost, count, time } from "./format.js";
import { sessionHref } from "./overview.js";
import { useRunsRefresh } from "./runs.js";
import type { ProofClause, RunCheckView, RunNodeView, RunView, TaskStatus } from "./types.js";
import { Badge, useLoad } from "./ui.js";

/**
 * One run (`GET /api/runs/:id/view`): its plan as a tree with each node's status, the last checks of each
 * task, why it is paused and how to go on, and the done proof once it finished. Everything shown is the
 * server's; the page only lays it out.
 */

const ICON: Record<TaskStatus, string> = {
  pending: "○",
  in_progress: "◐",
  verifying: "◑",
  done: "✓",
  failed: "✗",
  canceled: "⊘",
};

const FAILING_SHOWN = 20;

function Checks(props: { checks: RunCheckView[] }) {
  if (props.checks.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="checks">
      {props.checks.map((c, i) => {
        const outcome = c.skipped ? "skipped" : c.passed ? "passed" : "failed";
        return (
          <li key={i} class={`check ${outcome}`} data-check={c.name}>
            <span aria-hidden="true">{c.skipped ? "–" : c.passed ? "✓" : "✗"}</span> <strong>{c.name}</strong>{" "}
            <span class="outcome">{outcome}</span>
            {!c.passed && !c.skipped && (
              <span class="muted">{c.exitCode === null ? " (killed)" : ` (exit ${c.exitCode})`}</span>
            )}
            {c.tests !== null && (
              <span class="muted">
                {" "}
                · {c.tests.passed} passed, {c.tests.failed} failed
              </span>
            )}
            {c.failedTests.length > 0 && (
              <ul class="failing" aria-label={`failing tests of ${c.name}`}>
                {c.failedTests.slice(0, FAILING_SHOWN).map((name, j) => (
                  <li key={j}>{name}</li>
                ))}
                {c.failedTests.length > FAILING_SHOWN && (
                  <li class="muted">and {c.failedTests.length - FAILING_SHOWN} more</li>
                )}
              </ul>
            )}
            {!c.passed && c.output !== "" && (
              <details>
                <summary>output</summary>
                <pre>{c.output}</pre>
              </details>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** Whether a task's change was witnessed: its checks failed with the change set aside (docs/proof.md). */
function Witnessed(props: { task: NonNullable<RunNodeView["task"]> }) {
  const { evidence, red } = props.task;
  if (evidence === null) return <span class="muted">not yet</span>;
  const title =
    evidence === "witnessed"
      ? `red with its change set aside: ${red.join(", ")}`
      : evidence === "unwitnessed"
        ? "its checks pass with its change set aside too: no check sees it"
        : evidence.replaceAll("_", " ");
  const label =
    evidence === "witnessed" ? "yes" : evidence === "unwitnessed" ? "no" : evidence.replaceAll("_", " ");
  return (
    <span class={`badge b-w-${evidence}`} title={title}>
      {label}
    </span>
  );
}

function NodeRow(props: { node: RunNodeView }) {
  const { node } = props;
  const task = node.task;
  return (
    <tr data-node={node.id} aria-level={node.depth + 1} class={`k-${node.kind}`}>
      <td class="tree-cell" style={{ paddingLeft: `${8 + node.depth * 20}px` }}>
        <span class={`icon s-${node.status}`} title={node.status} aria-hidden="true">
          {ICON[node.status] ?? "?"}
        </span>{" "}
        <span class="title">{node.title}</span>
        <div class="muted">
          {node.kind} <code>{node.id}</code>
          {task === null && ` · ${node.leaves.done} of ${node.leaves.total} done`}
        </div>
      </td>
      <td data-testid="node-status">
        <Badge value={node.status} />
      </td>
      <td class="num">{task?.attempts ?? ""}</td>
      <td class="markers">
        {task?.fixOnly === true && <span class="marker fix">fix-only</span>}
        {task?.noop === true && (
          <span class="marker noop" title="closed because its checks already passed">
            no-op
          </span>
        )}
        {node.status === "failed" && task !== null && (
          <span class="marker">{task.permanent ? "for good" : "retry pending"}</span>
        )}
      </td>
      <td>{task?.commit != null ? <code title={task.commit}>{task.commit.slice(0, 7)}</code> : ""}</td>
      <td class="num">{count(node.tokens)}</td>
      <td class="num">{cost(node.costUsd, node.tokens)}</td>
      <td data-testid="node-witnessed">{task !== null && <Witnessed task={task} />}</td>
      <td>{task !== null && <Checks checks={task.checks} />}</td>
      <td class="detail" data-testid="node-reason">
        {task?.reason ?? ""}
      </td>
    </tr>
  );
}

function Proof(props: { proof: NonNullable<RunView["proof"]> }) {
  const { proof } = props;
  const label = (c: ProofClause) => c.name.replaceAll("_", " ");
  return (
    <section class="panel" aria-labelledby="proof-title" data-testid="run-proof">
      <h2 id="proof-title">Done proof</h2>
      <p>
        <Badge value={proof.holds ? "holds" : "fails"} />{" "}
        {proof.holds
          ? "Every clause holds: the run is done, proven."
          : "Not every clause holds: the run stopped without proof."}
      </p>
      <ul class="proof">
        {proof.clauses.map((c) => (
          <li key={c.name} data-clause={c.name} class={c.holds ? "passed" : "failed"}>
            <span aria-hidden="true">{c.holds ? "✓" : "✗"}</span> <strong>{label(c)}</strong>{" "}
            <span class="outcome">{c.holds ? "holds" : "fails"}</span>: {c.evidence}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Paused(props: { paused: NonNullable<RunView["paused"]> }) {
  const { paused } = props;
  return (
    <section class="panel paused" aria-labelledby="paused-title" data-testid="run-paused">
      <h2 id="paused-title">Paused</h2>
      <p class="reason" data-testid="paused-reason">
        {paused.reason}
      </p>
      <p>To go on, in the project:</p>
      <ol class="commands" data-testid="go-on">
        {paused.commands.map((command) => (
          <li key={command}>
            <code>{command}</code>
          </li>
        ))}
      </ol>
      <p class="muted">
        The run's budget and breaker: <a href={sessionHref(paused.scope)}>{paused.scope}</a>
      </p>
    </section>
  );
}

export function Run(props: { id: string }) {
  const { id } = props;
  const poll = useRunsRefresh();
  const { data: run, error } = useLoad(() => api<RunView>("GET", `api/runs/${enc(id)}/view`), [id, poll]);
  return (
    <main>
      <p>
        <a href="#/runs">← Runs</a>
      </p>
      <section class="panel" aria-labelledby="run-title">
        <h2 id="run-title">
          <span data-testid="run-title">{id}</span>{" "}
          {run !== null && (
            <span data-testid="run-status">
              <Badge value={run.status} />
            </span>
          )}
        </h2>
        {error !== null && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        {run !== null && (
          <dl class="facts">
            <dt>Plan</dt>
            <dd>{run.plan || "—"}</dd>
            <dt>Agent</dt>
            <dd>{run.agent || "—"}</dd>
            <dt>Branch</dt>
            <dd>
              {run.branch || "—"}
              {run.base !== "" && <span class="muted"> from {run.base}</span>}
            </dd>
            <dt>Iterations</dt>
            <dd>
              {run.iterations}
              {run.maxIterations !== null && <span class="muted"> of {run.maxIterations}</span>}
            </dd>
            <dt>Spent</dt>
            <dd>
              {count(run.tokens)} tokens, {cost(run.costUsd, run.tokens)}
            </dd>
            <dt>Updated</dt>
            <dd>{time(run.updatedAt)}</dd>
          </dl>
        )}
        {run?.problem != null && (
          <p class="form-error" role="alert">
            {run.problem}
          </p>
        )}
      </section>
      {run?.paused != null && <Paused paused={run.paused} />}
      {run !== null && run.nodes.length > 0 && (
        <section class="panel" aria-labelledby="tree-title">
          <h2 id="tree-title">Tasks</h2>
          <div class="table-wrap">
            <table class="run-tree" data-testid="run-tree">
              <thead>
                <tr>
                  <th>Node</th>
                  <th>Status</th>
                  <th>Attempts</th>
                  <th>Markers</th>
                  <th>Commit</th>
                  <th>Tokens</th>
                  <th>Cost</th>
                  <th>Witnessed</th>
                  <th>Last checks</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                {run.nodes.map((node) => (
                  <NodeRow key={node.id} node={node} />
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {run?.proof != null && <Proof proof={run.proof} />}
    </main>
  );
}
