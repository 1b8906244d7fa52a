import { useEffect, useState } from "preact/hooks";
import { acknowledgeAlert, acknowledgeBreaker, extendBudget, resetBreaker, resetBudget } from "./actions.js";
import { api, query } from "./api.js";
import { SpendChart } from "./chart.js";
import { ago, cost, count, startOfToday, time } from "./format.js";
import { useLive } from "./live.js";
import type { Circuit, Overview as OverviewData, Page, ScopeView, StoredAlert } from "./types.js";
import { Badge, Bars, Pager, refreshSoon, reportError, useLoad } from "./ui.js";

/** The overview: summary cards, sessions and budgets, breakers, alerts and token spend. */

export const sessionHref = (scope: string) => `#/session/${encodeURIComponent(scope)}`;

function Cards() {
  const { data, error } = useLoad(
    () => api<OverviewData>("GET", `api/overview${query({ since: startOfToday() })}`),
    [],
  );
  if (data === null) return <section class="cards">{error ?? "Loading…"}</section>;
  const b = data.budgets;
  const c = data.breakers;
  return (
    <section class="cards" aria-label="Summary">
      <div class="card" data-testid="card-sessions">
        <div class="card-title">Active sessions</div>
        <div class="card-value">{data.sessions.active}</div>
        <div class="muted">of {data.sessions.total} sessions</div>
      </div>
      <div class="card" data-testid="card-spend">
        <div class="card-title">Spent today</div>
        <div class="card-value">{count(data.spend.tokens)} tokens</div>
        <div class="muted" data-testid="spend-cost">
          {cost(data.spend.usd, data.spend.tokens)}
        </div>
      </div>
      <div class="card" data-testid="card-budgets">
        <div class="card-title">Budgets</div>
        <div class="card-value">
          <span class="ok-text">{b.active} OK</span> · <span class="warn-text">{b.warning} warning</span> ·{" "}
          <span class="bad-text">{b.paused + b.exhausted} paused</span>
        </div>
        <div class="muted">{data.alerts.open} open alerts</div>
      </div>
      <div class="card" data-testid="card-breakers">
        <div class="card-title">Circuit breakers</div>
        <div class="card-value">
          <span class="ok-text">{c.closed} closed</span> ·{" "}
          <span class="warn-text">{c.half_open} half-open</span> · <span class="bad-text">{c.open} open</span>
        </div>
      </div>
    </section>
  );
}

type Sort = "lastAt" | "scope" | "tokens" | "usd" | "utilization" | "events";
const PAGE = 25;

function SortHeader(props: {
  label: string;
  field: Sort;
  sort: Sort;
  order: "asc" | "desc";
  onSort: (f: Sort) => void;
}) {
  const active = props.sort === props.field;
  return (
    <th aria-sort={active ? (props.order === "asc" ? "ascending" : "descending") : "none"}>
      <button type="button" class="sort" onClick={() => props.onSort(props.field)}>
        {props.label}
        {active ? (props.order === "asc" ? " ▲" : " ▼") : ""}
      </button>
    </th>
  );
}

function SessionsTable(props: { onScopes: (scopes: string[]) => void }) {
  const [sort, setSort] = useState<Sort>("lastAt");
  const [order, setOrder] = useState<"asc" | "desc">("desc");
  const [status, setStatus] = useState("");
  const [breaker, setBreaker] = useState("");
  const [text, setText] = useState("");
  const [q, setQ] = useState("");
  const [offset, setOffset] = useState(0);
  const [kind, setKind] = useState<"sessions" | "budgets">("sessions");
  useEffect(() => {
    const t = setTimeout(() => setQ(text.trim()), 250);
    return () => clearTimeout(t);
  }, [text]);
  useEffect(() => setOffset(0), [status, breaker, q, sort, order, kind]);
  const { data, error } = useLoad(
    () =>
      api<Page<ScopeView>>(
        "GET",
        `api/${kind}${query({ limit: PAGE, offset, sort, order, status, breaker, q })}`,
      ),
    [sort, order, status, breaker, q, offset, kind],
  );
  const scopes =
    data?.items
      .slice(0, 8)
      .map((s) => s.scope)
      .join("\n") ?? "";
  useEffect(() => props.onScopes(scopes === "" ? [] : scopes.split("\n")), [scopes]);
  const onSort = (field: Sort) => {
    if (field === sort) setOrder(order === "asc" ? "desc" : "asc");
    else {
      setSort(field);
      setOrder(field === "scope" ? "asc" : "desc");
    }
  };
  const h = { sort, order, onSort };
  return (
    <section class="panel" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions and budgets</h2>
      <div class="filters">
        <input
          type="search"
          placeholder="Filter by session or agent"
          aria-label="Filter sessions"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <select
          aria-label="Scopes shown"
          value={kind}
          onChange={(e) => setKind(e.currentTarget.value as "sessions" | "budgets")}
        >
          <option value="sessions">sessions</option>
          <option value="budgets">every budget (sessions and pools)</option>
        </select>
        <select aria-label="Budget status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">any budget status</option>
          <option value="active">active</option>
          <option value="warning">warning</option>
          <option value="paused">paused</option>
          <option value="exhausted">exhausted</option>
        </select>
        <select
          aria-label="Breaker status"
          value={breaker}
          onChange={(e) => setBreaker(e.currentTarget.value)}
        >
          <option value="">any breaker</option>
          <option value="closed">closed</option>
          <option value="half_open">half-open</option>
          <option value="open">open</option>
        </select>
      </div>
      {error !== null && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table data-testid="sessions-table">
          <thead>
            <tr>
              <SortHeader label="Session" field="scope" {...h} />
              <th>Agent</th>
              <th>Task</th>
              <SortHeader label="Utilisation" field="utilization" {...h} />
              <SortHeader label="Tokens" field="tokens" {...h} />
              <SortHeader label="USD" field="usd" {...h} />
              <th>Status</th>
              <th>Breaker</th>
              <SortHeader label="Events" field="events" {...h} />
              <SortHeader label="Last activity" field="lastAt" {...h} />
              <th>Alerts</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {data?.items.map((s) => {
              const tokens = s.budget.find((b) => b.resource === "tokens")?.used;
              const spent = s.budget.find((b) => b.resource === "usd")?.used;
              return (
                <tr key={s.scope} data-scope={s.scope}>
                  <td>
                    <a href={sessionHref(s.scope)}>{s.scope.replace(/^session:/, "")}</a>
                  </td>
                  <td>{s.agent || "—"}</td>
                  <td>{s.task?.id ?? "—"}</td>
                  <td>
                    <Bars lines={s.budget} />
                  </td>
                  <td class="num">{tokens === undefined ? "—" : count(tokens)}</td>
                  <td class="num">{spent === undefined ? "—" : cost(spent, tokens ?? 0)}</td>
                  <td data-testid="budget-status">
                    {/* An open breaker stops the session whatever its budget says: never shown "active". */}
                    {!s.ended && s.breaker.status === "open" ? (
                      <>
                        <Badge value="stopped" title={s.breaker.detail ?? undefined} />
                        <span class="muted"> breaker open</span>
                      </>
                    ) : (
                      <Badge value={s.status} />
                    )}
                    {s.ended ? <span class="muted"> ended</span> : null}
                  </td>
                  <td>
                    <Badge value={s.breaker.status} title={s.breaker.detail ?? undefined} />
                  </td>
                  <td class="num">{s.events}</td>
                  <td title={time(s.lastAt)}>{ago(s.lastAt)}</td>
                  <td class="num">{s.openAlerts || ""}</td>
                  <td class="actions">
                    <button type="button" onClick={() => extendBudget(s.scope)}>
                      Extend…
                    </button>
                    <button type="button" onClick={() => resetBudget(s.scope)}>
                      Reset…
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {data !== null && (
        <Pager label="Sessions" total={data.total} offset={offset} limit={PAGE} onPage={setOffset} />
      )}
    </section>
  );
}

function BreakersTable() {
  const [filter, setFilter] = useState("open");
  const [offset, setOffset] = useState(0);
  useEffect(() => setOffset(0), [filter]);
  const { data, error } = useLoad(
    () => api<Page<Circuit>>("GET", `api/circuits${query({ limit: 10, offset, breaker: filter })}`),
    [filter, offset],
  );
  return (
    <section class="panel" aria-labelledby="breakers-title">
      <h2 id="breakers-title">Circuit breakers</h2>
      <div class="filters">
        <select aria-label="Breakers shown" value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
          <option value="open">open</option>
          <option value="half_open">half-open</option>
          <option value="closed">closed</option>
          <option value="">all</option>
        </select>
      </div>
      {error !== null && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table data-testid="breakers-table">
          <thead>
            <tr>
              <th>Session</th>
              <th>Agent</th>
              <th>State</th>
              <th>Trip reason</th>
              <th>Detail</th>
              <th>Trips</th>
              <th>Opened</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {data?.items.map((c) => (
              <tr key={c.id} data-scope={c.id}>
                <td>
                  <a href={sessionHref(c.id)}>{c.id.replace(/^session:/, "")}</a>
                </td>
                <td>{c.agent || "—"}</td>
                <td data-testid="breaker-status">
                  <Badge value={c.status} />
                </td>
                <td>{c.reason ?? "—"}</td>
                <td class="detail">{c.detail ?? ""}</td>
                <td class="num">{c.trips}</td>
                <td>{time(c.openedAt)}</td>
                <td class="actions">
                  <button
                    type="button"
                    disabled={c.status !== "open"}
                    onClick={() => acknowledgeBreaker(c.id)}
                  >
                    Acknowledge…
                  </button>
                  <button type="button" disabled={c.status === "closed"} onClick={() => resetBreaker(c.id)}>
                    Reset…
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data !== null && data.total === 0 && <p class="muted">No breakers in this state.</p>}
      {data !== null && data.total > 10 && (
        <Pager label="Breakers" total={data.total} offset={offset} limit={10} onPage={setOffset} />
      )}
    </section>
  );
}

function AlertsPanel() {
  const [offset, setOffset] = useState(0);
  const { data, error } = useLoad(
    () => api<Page<StoredAlert>>("GET", `api/alerts${query({ acknowledged: "false", limit: 20, offset })}`),
    [offset],
  );
  // Acknowledging the last alert of a page leaves it empty: go back one.
  useEffect(() => {
    if (data !== null && offset > 0 && offset >= data.total) setOffset(Math.max(0, offset - 20));
  }, [data, offset]);
  return (
    <details class="panel" open aria-labelledby="alerts-title">
      <summary>
        <h2 id="alerts-title">Alerts {data !== null ? `(${data.total} open)` : ""}</h2>
      </summary>
      {error !== null && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <ul class="alerts" data-testid="alerts">
        {data?.items.map((a) => (
          <li key={a.id}>
            <span class="muted">{time(a.at)}</span>{" "}
            <a href={sessionHref(a.scope)}>{a.scope.replace(/^session:/, "")}</a> <Badge value={a.kind} />{" "}
            <span>{a.message}</span>{" "}
            <button type="button" onClick={() => void acknowledgeAlert(a.id).catch(reportError)}>
              Ack
            </button>
          </li>
        ))}
      </ul>
      {data !== null && data.total > 20 && (
        <Pager label="Alerts" total={data.total} offset={offset} limit={20} onPage={setOffset} />
      )}
      {data !== null && data.total === 0 && <p class="muted">No open alerts.</p>}
    </details>
  );
}

export function Overview() {
  const [scopes, setScopes] = useState<string[]>([]);
  // Anything written anywhere may change the figures: reload, at most once a second.
  useLive(() => refreshSoon(), []);
  return (
    <main>
      <Cards />
      <SessionsTable onScopes={setScopes} />
      <BreakersTable />
      <AlertsPanel />
      <SpendChart
        scopes={scopes}
        caption="Cumulative tokens of the first sessions on the table's page, and their total."
      />
    </main>
  );
}
