// Small statistics helpers shared by the benchmarks.
import { cpus } from "node:os";

/** The q-quantile (0..1) of a list of numbers. */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export const median = (values) => quantile(values, 0.5);

/** One line naming the machine the figures come from. */
export function machine() {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown cpu"} x${cpu.length}, node ${process.version}, ${process.platform}/${process.arch}`;
}

/** Runs `fn` `rounds` times and returns the median of what it returns (so one noisy round does not decide). */
export function medianOf(rounds, fn) {
  const results = [];
  for (let r = 0; r < rounds; r++) results.push(fn());
  return median(results);
}
