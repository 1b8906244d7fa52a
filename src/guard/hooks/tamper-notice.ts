/** The notice source that tells the model, at a turn's start, of the tamper record (see tamper-record.ts). */
import type { Notices } from "./agent-adapter.js";
import { readTamper, tamperLines } from "./tamper-record.js";

/**
 * At a turn's start, what the tamper record of the runtime folder `runtime` holds (one file read; nothing
 * when there is no record); nothing with a deny.
 */
export function tamperNotices(runtime: string): Notices {
  return (when) => (when === "turn" ? tamperLines(readTamper(runtime)) : []);
}
