import type { ComponentChildren } from "preact";
import { useEffect, useId, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api.js";
import { amountOf, cost, usd } from "./format.js";
import type { BudgetLine } from "./types.js";

/** Shared pieces: notices, refresh ticks, dialogs, bars and badges. */

// Notices: what went wrong (or right) in a form the person sees, never swallowed.
type Notice = { id: number; kind: "error" | "ok"; text: string };
let notices: Notice[] = [];
let noticeId = 0;
const noticeWatchers = new Set<(n: Notice[]) => void>();
function setNotices(next: Notice[]): void {
  notices = next;
  for (const w of noticeWatchers) w(next);
}

/** Shows an error from an API call (or anything thrown) until dismissed. */
export function reportError(error: unknown): void {
  const text = error instanceof ApiError ? error.toString() : String(error);
  setNotices([...notices, { id: ++noticeId, kind: "error" as const, text }].slice(-5));
}

/** Shows what an action did, for a few seconds. */
export function reportDone(text: string): void {
  const id = ++noticeId;
  setNotices([...notices, { id, kind: "ok" as const, text }].slice(-5));
  setTimeout(() => setNotices(notices.filter((n) => n.id !== id)), 6_000);
}

export function Notices() {
  const [list, setList] = useState(notices);
  useEffect(() => {
    noticeWatchers.add(setList);
    return () => void noticeWatchers.delete(setList);
  }, []);
  if (list.length === 0) return null;
  return (
    <div class="notices">
      {list.map((n) => (
        <div key={n.id} class={`notice ${n.kind}`} role={n.kind === "error" ? "alert" : "status"}>
          <span>{n.text}</span>
          <button
            type="button"
            aria-label="Dismiss"
            onClick={() => setNotices(notices.filter((x) => x.id !== n.id))}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

// Refresh ticks: panels reload when the tick moves (after an action, or when the stream says something changed).
let tick = 0;
const tickWatchers = new Set<(t: number) => void>();
let pending: ReturnType<typeof setTimeout> | null = null;
let lastBump = 0;

/** Makes every panel reload now. */
export function refreshAll(): void {
  tick += 1;
  lastBump = Date.now();
  for (const w of tickWatchers) w(tick);
}

/** Makes every panel reload soon: at most once a second however many records stream in. */
export function refreshSoon(): void {
  if (pending !== null) return;
  const wait = Math.max(0, 1_000 - (Date.now() - lastBump));
  pending = setTimeout(() => {
    pending = null;
    refreshAll();
  }, wait);
}

export function useTick(): number {
  const [value, setValue] = useState(tick);
  useEffect(() => {
    tickWatchers.add(setValue);
    return () => void tickWatchers.delete(setValue);
  }, []);
  return value;
}

/**
 * A counter that moves every `ms` while the page is visible: put it in `useLoad`'s deps for data the event
 * stream does not announce (runs saved by a driver straight into the store).
 */
export function usePoll(ms: number): number {
  const [value, setValue] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") setValue((n) => n + 1);
    }, ms);
    return () => clearInterval(timer);
  }, [ms]);
  return value;
}

/** Loads `load()` whenever `deps` or the refresh tick change; keeps the last good value on errors. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | null; error: string | null } {
  const t = useTick();
  const [state, setState] = useState<{ data: T | null; error: string | null }>({ data: null, error: null });
  // A layout effect, so the request leaves before the first paint rather than after it.
  useLayoutEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data, error: null }),
      (error: unknown) =>
        live &&
        setState((s) => ({
          data: s.data,
          error: error instanceof ApiError ? error.toString() : String(error),
        })),
    );
    return () => {
      live = false;
    };
  }, [...deps, t]);
  return state;
}

// Dialogs: a stack (the token dialog may open over an action's), shown by whoever calls showDialog.
let dialogs: { id: number; node: ComponentChildren }[] = [];
let dialogId = 0;
let setDialogs: (list: typeof dialogs) => void = () => undefined;

export function showDialog(node: ComponentChildren): void {
  dialogs = [...dialogs, { id: ++dialogId, node }];
  setDialogs(dialogs);
}

/** Closes the topmost dialog. */
export function closeDialog(): void {
  dialogs = dialogs.slice(0, -1);
  setDialogs(dialogs);
}

export function DialogHost() {
  const [list, set] = useState(dialogs);
  useEffect(() => {
    setDialogs = set;
  }, []);
  return (
    <>
      {list.map((d) => (
        <div key={d.id}>{d.node}</div>
      ))}
    </>
  );
}

/** A modal `<dialog>`: opened on mount, Escape or the close button cancels. */
export function Modal(props: { title: string; children: ComponentChildren; onClose?: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (d !== null && !d.open) d.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={() => {
        props.onClose?.();
        closeDialog();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

const BY_KEY = "reins.by";
/** The name a person gave last time, for the `by` of their actions. */
export const rememberedName = (): string => localStorage.getItem(BY_KEY) ?? "";
export const rememberName = (name: string): void => localStorage.setItem(BY_KEY, name.trim());

export function Badge(props: { value: string; title?: string | undefined }) {
  return (
    <span class={`badge b-${props.value}`} title={props.title}>
      {props.value.replace("_", "-")}
    </span>
  );
}

/**
 * A utilisation bar: green, amber from 80 %, red from 100 %. `tokens` is what the meter spent in tokens: a
 * USD line with tokens spent and nothing priced says "no price", not "$0.00".
 */
export function Bar(props: { line: BudgetLine; tokens?: number }) {
  const { resource, used, limit, ratio } = props.line;
  const pct = Math.round(ratio * 100);
  const level = ratio >= 1 ? "over" : ratio >= 0.8 ? "warn" : "ok";
  const spent =
    resource === "usd" ? cost(used, props.tokens ?? 0).replace("—", usd(0)) : amountOf(resource, used);
  return (
    <div class="bar-line" title={`${resource}: ${spent} of ${amountOf(resource, limit)}`}>
      <span class="bar-label">
        {resource === "tokens" ? "tok" : resource === "wallTimeMs" ? "time" : resource}
      </span>
      <span
        class={`bar ${level}`}
        role="meter"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(pct, 100)}
        aria-label={`${resource} ${pct}%`}
      >
        <span style={{ width: `${Math.min(100, pct)}%` }} />
      </span>
      <span class="bar-text">
        {spent} / {amountOf(resource, limit)} ({pct}%)
      </span>
    </div>
  );
}

export function Bars(props: { lines: BudgetLine[] }) {
  if (props.lines.length === 0) return <span class="muted">no limit</span>;
  return (
    <div class="bars">
      {props.lines.map((l) => (
        <Bar key={l.resource} line={l} tokens={props.lines.find((t) => t.resource === "tokens")?.used ?? 0} />
      ))}
    </div>
  );
}

/** Previous and next buttons over a list the server pages. */
export function Pager(props: {
  total: number;
  offset: number;
  limit: number;
  onPage: (offset: number) => void;
  label: string;
}) {
  const { total, offset, limit } = props;
  const last = Math.min(total, offset + limit);
  return (
    <div class="pager" aria-label={`${props.label} pages`}>
      <button type="button" disabled={offset === 0} onClick={() => props.onPage(Math.max(0, offset - limit))}>
        ‹ Previous
      </button>
      <span>{total === 0 ? "none" : `${offset + 1}–${last} of ${total}`}</span>
      <button type="button" disabled={last >= total} onClick={() => props.onPage(offset + limit)}>
        Next ›
      </button>
    </div>
  );
}
