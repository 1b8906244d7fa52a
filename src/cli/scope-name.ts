/** The scope a person names on the command line: a whole scope, or a bare session id, else a "did you mean". */
import { distance } from "fastest-levenshtein";
import { ReinsError } from "../base/core/errors.js";

/** The id after a scope's kind (`abc` of `session:abc`), or the name whole when it has no kind. */
const idOf = (scope: string): string => scope.slice(scope.indexOf(":") + 1);

/**
 * The stored scope `given` names: itself when the store has it, else `session:<given>` for a bare session id
 * (what an agent's hook input and its status line show), else a not_found error that names the nearest
 * stored scope ("did you mean …"), compared whole and by its id alone.
 */
export function resolveScope(given: string, stored: readonly string[]): string {
  if (stored.includes(given)) return given;
  if (!given.includes(":") && stored.includes(`session:${given}`)) return `session:${given}`;
  let best: { scope: string; d: number } | null = null;
  for (const scope of stored) {
    const d = Math.min(distance(given, scope), distance(idOf(given), idOf(scope)));
    if (best === null || d < best.d) best = { scope, d };
  }
  // A suggestion only when it is near: a third of the name's length, at least two edits.
  const near = best !== null && best.d <= Math.max(2, Math.floor(idOf(given).length / 3));
  throw new ReinsError(
    "not_found",
    `no scope "${given}" in the store${near && best !== null ? `; did you mean \`${best.scope}\`?` : ""} (see \`reins sessions\`)`,
  );
}
