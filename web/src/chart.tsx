import { useEffect, useRef } from "preact/hooks";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { api, query } from "./api.js";
import { count } from "./format.js";
import type { SpendSeries } from "./types.js";
import { reportError, useLoad } from "./ui.js";

/** uPlot, loaded after the first render: the tables do not wait for the chart's code. */
let uplot: Promise<typeof uPlot> | null = null;
const loadUplot = () => (uplot ??= import("uplot").then((m) => m.default));

/** The axes' font, set so that the time labels can be measured before uPlot paints them. */
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
/** Room kept between two time labels on one line, in CSS pixels. */
const LABEL_GAP = 8;

const COLORS = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#0891b2", "#dc2626", "#65a30d", "#db2777"];

/** Lines up step series on one time axis (uPlot's shape): each value is the last one at or before x. */
export function align(series: SpendSeries[]): uPlot.AlignedData {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const columns = series.map((s) => {
    const out: (number | null)[] = [];
    let i = 0;
    let last: number | null = null;
    for (const x of xs) {
      while (i < s.points.length && s.points[i]![0] <= x) last = s.points[i++]![1];
      out.push(last);
    }
    return out;
  });
  const total = xs.map((_, j) => columns.reduce((sum, c) => sum + (c[j] ?? 0), 0));
  return [xs.map((x) => x / 1000), ...columns, ...(series.length > 1 ? [total] : [])];
}

/**
 * Blanks each line of a time label that would run into the same line of the last label kept before it
 * (labels are centred on their tick at `centers`). uPlot spaces its ticks for short labels, but its first
 * one also names the date ("11/23/26 4:17pm") and was printed over the next.
 */
function spaceLabels(
  labels: (string | number | null)[],
  centers: number[],
  width: (text: string) => number,
): (string | null)[] {
  const lastRight: number[] = [];
  return labels.map((label, i) => {
    if (label === null) return null;
    const center = centers[i] ?? 0;
    const lines = String(label)
      .split("\n")
      .map((line, row) => {
        if (line === "") return line;
        const half = width(line) / 2;
        if (center - half < (lastRight[row] ?? Number.NEGATIVE_INFINITY) + LABEL_GAP) return "";
        lastRight[row] = center + half;
        return line;
      });
    return lines.some((line) => line !== "") ? lines.join("\n") : null;
  });
}

let measuring: CanvasRenderingContext2D | null = null;
/** The width of `text` in the axes' font, in CSS pixels. */
function labelWidth(text: string): number {
  measuring ??= document.createElement("canvas").getContext("2d");
  if (measuring === null) return 0;
  measuring.font = AXIS_FONT;
  return measuring.measureText(text).width;
}

/**
 * Runs uPlot's own time labels through spaceLabels. By `init`, uPlot has turned the x axis' `values` into
 * its formatter function; it calls that again each time it lays out the axis.
 */
function spaceTimeLabels(u: uPlot): void {
  const axis = u.axes[0];
  const format = axis?.values;
  if (axis === undefined || typeof format !== "function") return;
  axis.values = (self, splits, ...rest) =>
    spaceLabels(
      format(self, splits, ...rest),
      splits.map((split) => self.valToPos(split, "x")),
      labelWidth,
    );
}

function options(UPlot: typeof uPlot, series: SpendSeries[], width: number): uPlot.Options {
  const stepped = UPlot.paths.stepped!({ align: 1 });
  const value = (_u: uPlot, v: number | null) => (v === null ? "—" : count(v));
  return {
    width,
    height: 240,
    legend: { show: true },
    scales: { x: { time: true } },
    axes: [
      { font: AXIS_FONT },
      { font: AXIS_FONT, values: (_u, ticks) => ticks.map((t) => count(t)), size: 60 },
    ],
    hooks: { init: [spaceTimeLabels] },
    series: [
      {},
      ...series.map((s, i) => ({
        label: s.scope.replace(/^session:/, ""),
        stroke: COLORS[i % COLORS.length]!,
        width: 1.5,
        points: { show: false },
        paths: stepped,
        value,
      })),
      // The total, when there is more than one session to add up (align() gives it a column then).
      ...(series.length > 1
        ? [
            {
              label: "total",
              stroke: "#111827",
              width: 2.5,
              dash: [6, 4],
              points: { show: false },
              paths: stepped,
              value,
            },
          ]
        : []),
    ],
  };
}

/**
 * Cumulative token spend over time of the given sessions (the table's current page) and their total,
 * from `GET /api/spend`; reloads with the other panels when the stream brings new records.
 */
export function SpendChart(props: { scopes: string[]; caption: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const key = props.scopes.join("\n");
  const { data, error } = useLoad(
    () =>
      props.scopes.length === 0
        ? Promise.resolve({ series: [] as SpendSeries[] })
        : api<{ series: SpendSeries[] }>("GET", `api/spend${query({ scope: props.scopes })}`),
    [key],
  );

  useEffect(() => {
    const el = box.current;
    if (el === null || data === null) return;
    let live = true;
    let observer: ResizeObserver | null = null;
    void loadUplot().then((UPlot) => {
      if (!live) return;
      plot.current?.destroy();
      plot.current = new UPlot(
        options(UPlot, data.series, Math.max(300, el.clientWidth)),
        align(data.series),
        el,
      );
      observer = new ResizeObserver(() =>
        plot.current?.setSize({ width: Math.max(300, el.clientWidth), height: 240 }),
      );
      observer.observe(el);
    }, reportError);
    return () => {
      live = false;
      observer?.disconnect();
    };
  }, [data]);

  useEffect(() => () => plot.current?.destroy(), []);

  return (
    <section class="panel" aria-labelledby="spend-title">
      <h2 id="spend-title">Token spend over time</h2>
      <p class="muted">{props.caption}</p>
      {error !== null && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {data !== null && data.series.every((s) => s.points.length === 0) && (
        <p class="muted">No usage recorded yet.</p>
      )}
      <div ref={box} class="chart" data-testid="spend-chart" />
    </section>
  );
}
