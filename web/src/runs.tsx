import { useState } from "preact/hooks";
import { api, query } from "./api.js";
import { ago, cost, count, time } from "./format.js";
import { useLive } from "./live.js";
import type { Page, StoredRun } from "./types.js";
import { Badge, Pager, refreshSoon, useLoad, usePoll } from "./ui.js";

/** The runs of `reins run`, newest first, as the store keeps them (`GET /api/runs`). */

export const runHref = (id: string) => `#/runs/${encodeURIComponent(id)}`;

/**
 * How often the runs are read again: a driver saves its checkpoint straight into the store, which the
 * event stream does not announce.
 */
export const RUNS_POLL_MS = 3_000;

const PAGE = 25;

type Listed = Omit<StoredRun, "checkpoint">;

const field = (record: unknown, key: string): unknown =>
  typeof record === "object" && record !== null && Object.hasOwn(record, key)
    ? (record as Record<string, unknown>)[key]
    : undefined;
const text = (v: unknown) => (typeof v === "string" ? v : "");
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A stored summary's fields (src/run/drive/checkpoint.ts runSummary), read without trusting their types. */
function fields(summary: Record<string, unknown>) {
  return {
    plan: text(field(summary, "plan")),
    agent: text(field(summary, "agent")),
    branch: text(field(summary, "branch")),
    tasks: num(field(summary, "tasks")),
    done: num(field(field(summary, "counts"), "done")) ?? 0,
    iterations: num(field(summary, "iterations")),
    tokens: num(field(summary, "tokens")),
    costUsd: num(field(summary, "costUsd")),
  };
}

/** Rereads the runs while the page shows them, and soon after the guard of a run records something here. */
export function useRunsRefresh(): number {
  useLive((record) => {
    if (record.scope.startsWith("run:")) refreshSoon();
  }, []);
  return usePoll(RUNS_POLL_MS);
}

export function Runs() {
  const [offset, setOffset] = useState(0);
  const poll = useRunsRefresh();
  const { data, error } = useLoad(
    () => api<Page<Listed>>("GET", `api/runs${query({ limit: PAGE, offset })}`),
    [offset, poll],
  );
  return (
    <main>
      <section class="panel" aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
        <p class="muted">
          Runs of <code>reins run</code>, most recently updated first; each is saved after every step.
        </p>
        {error !== null && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <div class="table-wrap">
          <table data-testid="runs-table">
            <thead>
              <tr>
                <th>Run</th>
                <th>Status</th>
                <th>Plan</th>
                <th>Agent</th>
                <th>Branch</th>
                <th>Tasks done</th>
                <th>Iterations</th>
                <th>Tokens</th>
                <th>Cost</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {data?.items.map((run) => {
                const f = fields(run.summary);
                return (
                  <tr key={run.id} data-run={run.id}>
                    <td>
                      <a href={runHref(run.id)}>{run.id}</a>
                    </td>
                    <td data-testid="run-status">
                      <Badge value={run.status} />
                    </td>
                    <td class="detail">{f.plan || "—"}</td>
                    <td>{f.agent || "—"}</td>
                    <td class="detail">{f.branch || "—"}</td>
                    <td class="num" data-testid="run-tasks">
                      {f.tasks === null ? "—" : `${f.done} of ${f.tasks}`}
                    </td>
                    <td class="num">{f.iterations ?? "—"}</td>
                    <td class="num">{f.tokens === null ? "—" : count(f.tokens)}</td>
                    <td class="num">{f.costUsd === null ? "—" : cost(f.costUsd, f.tokens ?? 0)}</td>
                    <td class="nowrap" title={time(run.updatedAt)}>
                      {ago(run.updatedAt)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        {data !== null && data.total === 0 && (
          <p class="muted">
            No runs yet: start one with <code>reins run</code>.
          </p>
        )}
        {data !== null && data.total > PAGE && (
          <Pager label="Runs" total={data.total} offset={offset} limit={PAGE} onPage={setOffset} />
        )}
      </section>
    </main>
  );
}
