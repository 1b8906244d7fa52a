import { useEffect, useState } from "preact/hooks";
import { acknowledgeBreaker, extendBudget, resetBreaker, resetBudget } from "./actions.js";
import { api, enc, query } from "./api.js";
import { SpendChart } from "./chart.js";
import { describe, time } from "./format.js";
import { useLive } from "./live.js";
import type { LogRecord, Page, ReinsEvent, ScopeView, StoredAlert } from "./types.js";
import { Badge, Bars, refreshSoon, reportError, useLoad, useTick } from "./ui.js";

/** One session: its budget and breaker, the event timeline with every decision, and its history. */

const PAGE = 200;

type Filter = "all" | "decisions" | "human";

const isHuman = (e: ReinsEvent) => e.kind.startsWith("human.");

function TimelineRow(props: { record: LogRecord }) {
  const { event, decision, seq } = props.record;
  const human = isHuman(event);
  const results = decision.results.filter((r) => r.verdict !== "allow");
  const who = "by" in event ? event.by : null;
  const why = "reason" in event && typeof event.reason === "string" && human ? event.reason : null;
  return (
    <tr class={`v-${decision.verdict}${human ? " human" : ""}`} data-seq={seq}>
      <td class="num">{seq}</td>
      <td class="nowrap">{time(event.at)}</td>
      <td class="nowrap">{event.kind}</td>
      <td class="detail">
        <div class="what">{describe(event)}</div>
        {who !== null && (
          <div class="who">
            by {who}
            {why !== null ? ` — ${why}` : ""}
          </div>
        )}
      </td>
      <td class="nowrap">
        <Badge value={decision.verdict} />
        {decision.needsHuman && <Badge value="human" title="a person must confirm" />}
      </td>
      <td class="detail">
        {results.map((r, i) => (
          <div key={i} class="guard">
            <strong>{r.guard}</strong> ({r.verdict}): {r.message ?? ""}
          </div>
        ))}
        {decision.instructions.length > 0 && (
          <div class="instructions">
            <span class="muted">told the agent:</span>
            <ul>
              {decision.instructions.map((text, i) => (
                <li key={i}>{text}</li>
              ))}
            </ul>
          </div>
        )}
      </td>
    </tr>
  );
}

export function Session(props: { scope: string }) {
  const { scope } = props;
  const view = useLoad(() => api<{ summary: ScopeView }>("GET", `api/sessions/${enc(scope)}`), [scope]);
  const alerts = useLoad(
    () => api<Page<StoredAlert>>("GET", `api/alerts${query({ budget_id: scope, limit: 100 })}`),
    [scope],
  );
  const [records, setRecords] = useState<LogRecord[]>([]);
  const [first, setFirst] = useState<number | null>(null);
  const [filter, setFilter] = useState<Filter>("all");
  const [loading, setLoading] = useState(true);

  // The latest PAGE records first; earlier ones on demand.
  useEffect(() => {
    let live = true;
    setRecords([]);
    setLoading(true);
    void (async () => {
      try {
        const { summary } = await api<{ summary: ScopeView }>("GET", `api/sessions/${enc(scope)}`);
        const from = Math.max(0, summary.events - PAGE);
        const page = await api<{ items: LogRecord[] }>(
          "GET",
          `api/sessions/${enc(scope)}/events${query({ from, limit: PAGE })}`,
        );
        if (!live) return;
        setFirst(from);
        setRecords((now) => merge(page.items, now));
      } catch (error) {
        if (live) reportError(error);
      } finally {
        if (live) setLoading(false);
      }
    })();
    return () => {
      live = false;
    };
  }, [scope]);

  useLive(
    (record) => {
      if (record.scope !== scope) return;
      setRecords((now) => merge(now, [record]));
      refreshSoon();
    },
    [scope],
  );

  // On each reload (after an action, or the stream coming back after a gap) the log is read on from the
  // last record shown, so nothing written while the stream was down is missing.
  const tick = useTick();
  const last = records.at(-1)?.seq;
  useEffect(() => {
    if (last === undefined) return;
    api<{ items: LogRecord[] }>(
      "GET",
      `api/sessions/${enc(scope)}/events${query({ from: last + 1, limit: PAGE })}`,
    ).then((page) => page.items.length > 0 && setRecords((now) => merge(now, page.items)), reportError);
  }, [tick]);

  const loadEarlier = async () => {
    if (first === null || first === 0) return;
    const from = Math.max(0, first - PAGE);
    try {
      const page = await api<{ items: LogRecord[] }>(
        "GET",
        `api/sessions/${enc(scope)}/events${query({ from, limit: first - from })}`,
      );
      setFirst(from);
      setRecords((now) => merge(page.items, now));
    } catch (error) {
      reportError(error);
    }
  };

  const s = view.data?.summary;
  const shown = records.filter((r) =>
    filter === "all" ? true : filter === "human" ? isHuman(r.event) : r.decision.verdict !== "allow",
  );
  const humans = records.filter((r) => isHuman(r.event));
  return (
    <main>
      <p>
        <a href="#/">← Overview</a>
      </p>
      <section class="panel" aria-labelledby="session-title">
        <h2 id="session-title" data-testid="session-title">
          {scope}
        </h2>
        {view.error !== null && (
          <p class="form-error" role="alert">
            {view.error}
          </p>
        )}
        {s !== undefined && (
          <div class="session-head">
            <dl>
              <dt>Agent</dt>
              <dd>{s.agent || "—"}</dd>
              <dt>Session</dt>
              <dd data-testid="session-state">
                {s.ended ? (
                  <Badge value="ended" />
                ) : s.breaker.status === "open" || s.status === "paused" ? (
                  <>
                    <Badge value="stopped" />{" "}
                    <span class="muted">
                      {s.breaker.status === "open" ? "breaker open" : "budget paused"}
                    </span>
                  </>
                ) : (
                  <Badge value="active" />
                )}
              </dd>
              <dt>Budget</dt>
              <dd data-testid="budget-status">
                <Badge value={s.status} /> {s.ended ? "(ended)" : ""}
              </dd>
              <dt>Breaker</dt>
              <dd data-testid="breaker-status">
                <Badge value={s.breaker.status} /> {s.breaker.reason ?? ""}{" "}
                {s.breaker.trips > 0 ? `(${s.breaker.trips} trips)` : ""}
              </dd>
              <dt>Breaker detail</dt>
              <dd class="detail">{s.breaker.detail ?? "—"}</dd>
              <dt>Started</dt>
              <dd>{time(s.startedAt)}</dd>
              <dt>Last event</dt>
              <dd>{time(s.lastAt)}</dd>
              <dt>Task</dt>
              <dd>{s.task?.id ?? "—"}</dd>
            </dl>
            <div>
              <h3>Session budget</h3>
              <Bars lines={s.budget} />
              {s.task !== null && s.task.budget.length > 0 && (
                <>
                  <h3>Task budget</h3>
                  <Bars lines={s.task.budget} />
                </>
              )}
              <div class="actions">
                <button type="button" onClick={() => extendBudget(scope)}>
                  Extend budget…
                </button>
                <button type="button" onClick={() => resetBudget(scope)}>
                  Reset budget…
                </button>
                <button
                  type="button"
                  disabled={s.breaker.status !== "open"}
                  onClick={() => acknowledgeBreaker(scope)}
                >
                  Acknowledge breaker…
                </button>
                <button
                  type="button"
                  disabled={s.breaker.status === "closed"}
                  onClick={() => resetBreaker(scope)}
                >
                  Reset breaker…
                </button>
              </div>
            </div>
          </div>
        )}
      </section>

      <div class="two">
        <section class="panel" aria-labelledby="history-title">
          <h2 id="history-title">Budget and breaker history</h2>
          <ul class="alerts" data-testid="history">
            {alerts.data?.items.map((a) => (
              <li key={a.id}>
                <span class="muted">{time(a.at)}</span> <Badge value={a.kind} /> <span>{a.message}</span>{" "}
                {a.acknowledged ? (
                  <span class="muted">(acknowledged by {a.acknowledgedBy ?? "?"})</span>
                ) : null}
              </li>
            ))}
          </ul>
          {alerts.data !== null && alerts.data.total === 0 && <p class="muted">No alerts.</p>}
        </section>
        <section class="panel" aria-labelledby="humans-title">
          <h2 id="humans-title">Human actions</h2>
          <ul class="alerts" data-testid="human-actions">
            {humans.map((r) => {
              const e = r.event as Extract<ReinsEvent, { by: string }>;
              return (
                <li key={r.seq}>
                  <span class="muted">{time(e.at)}</span> <strong>{e.kind.replace("human.", "")}</strong>{" "}
                  {describe(e)} by <strong>{e.by}</strong>
                  {e.reason !== undefined ? ` — ${e.reason}` : ""}
                </li>
              );
            })}
          </ul>
          {humans.length === 0 && <p class="muted">None in the events shown.</p>}
        </section>
      </div>

      <SpendChart scopes={[scope]} caption="Cumulative tokens of this session." />

      <section class="panel" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <div class="filters">
          <select
            aria-label="Events shown"
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value as Filter)}
          >
            <option value="all">every event</option>
            <option value="decisions">warnings and blocks</option>
            <option value="human">human actions</option>
          </select>
          {first !== null && first > 0 && (
            <button type="button" onClick={() => void loadEarlier()}>
              Load {Math.min(PAGE, first)} earlier events
            </button>
          )}
          <span class="muted">
            {shown.length === records.length ? records.length : `${shown.length} of ${records.length}`} events
            shown{loading ? ", loading…" : ""}
          </span>
        </div>
        <div class="table-wrap">
          <table class="timeline" data-testid="timeline">
            <thead>
              <tr>
                <th>#</th>
                <th>Time</th>
                <th>Event</th>
                <th>What</th>
                <th>Decision</th>
                <th>Guards and instructions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((r) => (
                <TimelineRow key={r.seq} record={r} />
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </main>
  );
}

/** Records of both lists, once each, in log order. */
function merge(a: LogRecord[], b: LogRecord[]): LogRecord[] {
  const bySeq = new Map<number, LogRecord>();
  for (const r of a) bySeq.set(r.seq, r);
  for (const r of b) bySeq.set(r.seq, r);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
}
