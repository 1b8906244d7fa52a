import { render } from "preact";
import { api } from "./api.js";
import { ago, count } from "./format.js";
import type { AllStatus, ProjectView } from "./types.js";
import { Badge, refreshAll, useLoad, usePoll } from "./ui.js";
import "./styles.css";

/**
 * The user-level page of `reins serve --all`: every project of the user's at once (its sessions, spend
 * today, open breakers with the command that releases each, alerts), each linking to its own dashboard
 * under `p/<id>/`. Read again every 5 s.
 */

/** USD, or "no price" where nothing spent was priced (never "$0.00" for spend without a price). */
export function cost(usd: number | null, tokens: number): string {
  if (usd !== null) return `$${usd.toFixed(usd >= 100 ? 0 : 2)}`;
  return tokens > 0 ? "no price" : "—";
}

function Project(props: { p: ProjectView; now: number }) {
  const { p, now } = props;
  const s = p.sessions;
  return (
    <section class="panel project" data-testid="project" data-root={p.root} aria-label={p.name}>
      <h2>
        <a href={`p/${p.id}/`} data-testid="project-link">
          {p.name}
        </a>{" "}
        <span class="muted">{p.root}</span> <a href={`p/${p.id}/`}>dashboard ›</a>
      </h2>
      <p class="muted">
        {p.servedNow ? "held open by the hook daemon" : `last served by the daemon ${ago(p.servedAt, now)}`}
        {p.store !== null ? ` · store ${p.store}` : ""}
      </p>
      {p.problem !== "" ? (
        <p data-testid="project-problem">{p.problem}</p>
      ) : (
        <>
          <p data-testid="project-summary">
            <strong>{s.active}</strong> active · <strong>{s.stopped}</strong> stopped · {s.ended} ended ·
            today <strong>{count(p.today.tokens)}</strong> tokens,{" "}
            <span data-testid="project-cost">{cost(p.today.usd, p.today.tokens)}</span>
          </p>
          {s.latest.length > 0 && (
            <div class="table-wrap">
              <table data-testid="project-sessions">
                <thead>
                  <tr>
                    <th>Session</th>
                    <th>Agent</th>
                    <th>State</th>
                    <th>Last seen</th>
                    <th>Tokens</th>
                    <th>Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {s.latest.map((line) => (
                    <tr key={line.scope} data-scope={line.scope}>
                      <td>
                        <a href={`p/${p.id}/#/session/${encodeURIComponent(line.scope)}`}>
                          {line.scope.replace(/^session:/, "")}
                        </a>
                      </td>
                      <td>{line.agent || "—"}</td>
                      <td data-testid="session-state">
                        <Badge value={line.state} title={line.why || undefined} />
                        {line.why !== "" && <span class="muted"> {line.why}</span>}
                      </td>
                      <td>{ago(line.lastAt, now)}</td>
                      <td class="num">{count(line.tokens)}</td>
                      <td class="num">{cost(line.usd, line.tokens)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {p.breakers.length > 0 && <h3>Breakers open</h3>}
          {p.breakers.length > 0 && (
            <ul class="breakers" data-testid="project-breakers">
              {p.breakers.map((b) => (
                <li key={b.scope}>
                  <Badge value="open" /> {b.scope}
                  {b.reason !== null ? ` (${b.reason})` : ""}
                  {b.detail !== null ? `: ${b.detail}` : ""}
                  <br />
                  release: <code>{b.release}</code>
                </li>
              ))}
            </ul>
          )}
          {p.alerts.length > 0 && <h3>Alerts</h3>}
          {p.alerts.length > 0 && (
            <ul class="alerts" data-testid="project-alerts">
              {p.alerts.map((a) => (
                <li key={a.id}>
                  <Badge value={a.kind} /> {a.scope}: {a.message}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

function AllProjects() {
  const poll = usePoll(5_000);
  const { data, error } = useLoad(() => api<AllStatus>("GET", "api/all"), [poll]);
  return (
    <>
      <header>
        <h1>
          <a href="./">reins</a> <span class="muted">every project</span>
        </h1>
        <span data-testid="daemon-line" class="muted">
          {data === null
            ? ""
            : data.daemon.running
              ? `hook daemon running (pid ${data.daemon.pids.join(", ")}), ${data.daemon.projectsOpen} project(s) open`
              : data.daemon.detail}
        </span>
        <button type="button" onClick={refreshAll}>
          Refresh
        </button>
      </header>
      <main>
        {error !== null && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        {data === null && error === null && <p>Loading…</p>}
        {data !== null && data.projects.length === 0 && (
          <p class="muted">No projects known yet: `reins init &lt;agent&gt;` in a project.</p>
        )}
        {data?.projects.map((p) => (
          <Project key={p.id} p={p} now={data.at} />
        ))}
      </main>
    </>
  );
}

render(<AllProjects />, document.getElementById("app")!);
