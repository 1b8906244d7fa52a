/** Counts with their nouns in the right number: "1 scope", "2 scopes", "1,204 events". */

/** The noun for `n` of it: `singular` for exactly one, else `plural` (by default the singular plus "s"). */
export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
  return n === 1 ? singular : pluralForm;
}

/**
 * `n` and its noun in the right number, the count grouped by thousands: `counted(1, "scope")` is "1 scope",
 * `counted(1204, "event")` is "1,204 events", `counted(2, "dependency edge")` is "2 dependency edges".
 */
export function counted(n: number, singular: string, pluralForm = `${singular}s`): string {
  const digits = Number.isInteger(n)
    ? String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
    : String(Math.abs(n));
  return `${n < 0 ? "-" : ""}${digits} ${plural(n, singular, pluralForm)}`;
}
