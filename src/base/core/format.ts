/** Number formatting for messages, independent of the machine's locale so decisions replay bit for bit. */

/** 1234567 → "1,234,567"; fractions are rounded. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const sign = n < 0 ? "-" : "";
  return sign + String(Math.round(Math.abs(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** 0.8512 → "85%". */
export function formatPercent(ratio: number): string {
  // The epsilon keeps 0.29 at 29% (0.29 * 100 is 28.999999999999996).
  return Number.isFinite(ratio) ? `${Math.floor(ratio * 100 + 1e-9)}%` : "100%+";
}

/** 1.5 → "$1.50". */
export function formatUsd(n: number): string {
  return `$${n.toFixed(2)}`;
}

/** 95000 → "1m 35s". */
export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  if (h > 0) return `${h}h ${m % 60}m`;
  if (m > 0) return s % 60 === 0 ? `${m}m` : `${m}m ${s % 60}s`;
  return `${s}s`;
}
