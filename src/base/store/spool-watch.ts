/** Whether a spool may hold batches, told by a stat of its folder instead of a listing on every call. */
import { statSync } from "node:fs";
import type { Spool } from "./spool.js";

/**
 * How long after its last change a folder found empty is still listed again, ms: a file system stamps
 * times from a coarse clock, so a batch renamed in within the same tick as an earlier change could leave
 * the stamp as it was. Git's "racily clean" index entries are the same problem.
 */
export const RACY_MS = 3_000;

/** A folder as stat sees it: which one (ino) and when its entries last changed (ns). */
interface Stamp {
  ino: bigint;
  mtimeNs: bigint;
}

/** The stamp each spool's folder had when it was last listed and found empty (and not racily so). */
const quiet = new WeakMap<Spool, Stamp>();

/**
 * Whether `spool` may hold batches to deliver. A folder that does not exist holds none; one whose stamp is
 * the one it had when last found empty holds none either, as every batch is renamed into it (by this
 * process or another), which changes the stamp. Anything else is listed. Costs one stat in the common
 * case, where a listing costs a dozen µs and, with no folder, an exception.
 */
export function spoolMayHold(spool: Spool, now = Date.now()): boolean {
  let stat;
  try {
    stat = statSync(spool.dir, { bigint: true, throwIfNoEntry: false });
  } catch {
    return true; // cannot tell: the drain finds out, as it always did
  }
  if (stat === undefined) return false;
  const known = quiet.get(spool);
  if (known !== undefined && known.ino === stat.ino && known.mtimeNs === stat.mtimeNs) return false;
  // Stat first, then list: a batch renamed in after the stat changes the stamp after the one kept.
  if (spool.files().length > 0) return true;
  if (now - Number(stat.mtimeNs / 1_000_000n) > RACY_MS)
    quiet.set(spool, { ino: stat.ino, mtimeNs: stat.mtimeNs });
  return false;
}
