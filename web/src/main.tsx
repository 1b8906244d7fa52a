import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { askForToken } from "./actions.js";
import { onTokenNeeded, storeToken, storedToken } from "./api.js";
import { useLiveStatus } from "./live.js";
import { Overview } from "./overview.js";
import { Session } from "./session.js";
import "./styles.css";
import { DialogHost, Notices, refreshAll } from "./ui.js";

/** The dashboard's shell: header, hash routes (`#/`, `#/session/<id>`), notices and dialogs. */

type Route = { page: "overview" } | { page: "session"; scope: string };

function routeOf(hash: string): Route {
  const m = /^#\/session\/(.+)$/.exec(hash);
  if (m !== null) {
    try {
      return { page: "session", scope: decodeURIComponent(m[1]!) };
    } catch {
      return { page: "overview" };
    }
  }
  return { page: "overview" };
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

function Header() {
  const live = useLiveStatus();
  const [hasToken, setHasToken] = useState(storedToken() !== null);
  return (
    <header>
      <h1>
        <a href="#/">reins</a> <span class="muted">dashboard</span>
      </h1>
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
      <Header />
      <Notices />
      {route.page === "session" ? <Session key={route.scope} scope={route.scope} /> : <Overview />}
      <DialogHost />
    </>
  );
}

render(<App />, document.getElementById("app")!);
