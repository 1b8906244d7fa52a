/** What a store holds, in words: its scopes, events and bytes ("1 scope, 40 events, 82 kB"). */
import type { StoreUsage } from "../base/core/store.js";
import { counted } from "../base/text/plural.js";

/** 1.2 MB, 850 kB, 12 B. */
export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} kB`;
  return `${n} B`;
}

/** `12 scopes, 3,456 events, 1.2 MB`: what a store holds, for `reins status` and `reins gc`. */
export function formatUsage(usage: StoreUsage): string {
  const bytes = usage.bytes === null ? "" : `, ${formatBytes(usage.bytes)}`;
  return `${counted(usage.scopes, "scope")}, ${counted(usage.records, "event")}${bytes}`;
}
