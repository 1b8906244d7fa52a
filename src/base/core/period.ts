/** Calendar periods computed from epoch ms with integer arithmetic (UTC), so pools stay clock-free. */

export type Period = "none" | "daily" | "weekly" | "monthly";

const DAY = 86_400_000;

/** Days since 1970-01-01 → [year, month 1..12, day 1..31] (Howard Hinnant's civil_from_days). */
function civil(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

const two = (n: number) => String(n).padStart(2, "0");

function date(days: number): string {
  const [y, m, d] = civil(days);
  return `${y}-${two(m)}-${two(d)}`;
}

/** The label of the period holding `at`: "" for none, `2026-01-05` daily, `week-2026-01-05` (its Monday), `2026-01` monthly. */
export function periodLabel(at: number, period: Period): string {
  const days = Math.floor(at / DAY);
  switch (period) {
    case "none":
      return "";
    case "daily":
      return date(days);
    case "weekly":
      // 1970-01-01 was a Thursday: (days + 3) mod 7 counts days since Monday.
      return `week-${date(days - ((((days + 3) % 7) + 7) % 7))}`;
    case "monthly": {
      const [y, m] = civil(days);
      return `${y}-${two(m)}`;
    }
  }
}
