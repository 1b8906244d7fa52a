import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { askForToken } from "./actions.js";
import { onTokenNeeded, storeToken, storedToken } from "./api.js";
import { useLiveStatus } from "./live.js";
import { Overview } from "./overview.js";
import { Run } from "./run.js";
import { Runs } from "./runs.js";
import { Session } from "./session.js";
import "./styles.css";
import { DialogHost, Notices, refreshAll } from "./ui.js";

/**
 * The dashboard's shell: header with the navigation, hash routes (`#/`, `#/session/<id>`, `#/runs`,
 * `#/runs/<id>`), notices and dialogs.
 */

type Route =
  { page: "overview" } | { page: "session"; scope: string } | { page: "runs" } | { page: "run"; id: string };

function routeOf(hash: string): Route {
  if (hash === "#/runs") return { page: "runs" };
  const m = /^#\/(session|runs)\/(.+)$/.exec(hash);
  if (m === null) return { page: "overview" };
  let id: string;
  try {
    id = decodeURIComponent(m[2]!);
  } catch {
    return { page: "overview" };
  }
  return m[1] === "runs" ? { page: "run", id } : { page: "session", scope: id };
}

function useRoute(): Route {
  const [route, setRoute] = useState(routeOf(location.hash));
  useEffect(() => {
    const on = () => setRoute(routeOf(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

/** Whether this dashboard is one project's under `reins serve --all` (`/p/<id>/`), which links back. */
const UNDER_ALL = /^\/p\/[0-9a-f]{16}\/$/.test(location.pathname);

function Nav(props: { route: Route }) {
  const runs = props.route.page === "runs" || props.route.page === "run";
  return (
    <nav aria-label="Pages">
      <a href="#/" aria-current={runs ? undefined : "page"}>
        Overview
      </a>
      <a href="#/runs" aria-current={runs ? "page" : undefined}>
        Runs
      </a>
    </nav>
  );
}

function Header(props: { route: Route }) {
  const live = useLiveStatus();
  const [hasToken, setHasToken] = useState(storedToken() !== null);
  return (
    <header>
      <h1>
        <a href="#/">reins</a> <span class="muted">dashboard</span>
      </h1>
      {UNDER_ALL && (
        <a href="../../" data-testid="all-projects-link">
          ‹ every project
        </a>
      )}
      <Nav route={props.route} />
      <span class={`live ${live}`} data-testid="live-status" title="the server's event stream">
        {live === "live" ? "● live" : live === "connecting" ? "○ connecting" : "○ reconnecting"}
      </span>
      <button type="button" onClick={refreshAll}>
        Refresh
      </button>
      <button
        type="button"
        onClick={() => {
          if (hasToken) {
            storeToken(null);
            setHasToken(false);
            return;
          }
          void askForToken(
            "Actions need the API token (printed by `reins serve`, kept in .reins/api-token).",
          ).then((token) => {
            if (token !== null) storeToken(token);
            setHasToken(storedToken() !== null);
          });
        }}
      >
        {hasToken ? "Forget token" : "Set token"}
      </button>
    </header>
  );
}

function App() {
  const route = useRoute();
  useEffect(() => onTokenNeeded(askForToken), []);
  return (
    <>
      <Header route={route} />
      <Notices />
      {route.page === "session" ? (
        <Session key={route.scope} scope={route.scope} />
      ) : route.page === "runs" ? (
        <Runs />
      ) : route.page === "run" ? (
        <Run key={route.id} id={route.id} />
      ) : (
        <Overview />
      )}
      <DialogHost />
    </>
  );
}

render(<App />, document.getElementById("app")!);
