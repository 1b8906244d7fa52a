/** Durations as people write them in plans and settings: `250ms`, `30s`, `10m`, `1h`, or milliseconds. */
import * as z from "zod";

/** `250ms`, `30s`, `10m`, `1h`. */
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Milliseconds of a duration written as `10m`, `30s`, `250ms`, `1h` (the pattern has already matched). */
function durationMs(text: string): number {
  const match = DURATION.exec(text);
  const unit = (match?.[2] ?? "ms") as keyof typeof UNIT_MS;
  return Math.round(Number(match?.[1]) * UNIT_MS[unit]);
}

/** A duration: a positive number of milliseconds, or a number with `ms`, `s`, `m` or `h`; at most 24 h. */
export const duration = z
  .union(
    [z.int().positive(), z.string().regex(DURATION, 'expected a duration such as "30s", "10m" or "1h"')],
    {
      error: 'expected a duration: milliseconds, or a number with ms, s, m or h ("10m")',
    },
  )
  .transform((value) => (typeof value === "number" ? value : durationMs(value)))
  .refine((ms) => ms > 0 && ms <= 86_400_000, "must be more than 0 and at most 24h");
