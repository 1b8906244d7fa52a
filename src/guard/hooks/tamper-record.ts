/**
 * The tamper record: one JSON line per time something stood in for the user's hook daemon (a program that
 * took its socket, an answer a client could not trust), kept in `tamper.jsonl` of the runtime folder until
 * a person acknowledges it (`reins daemon ack`). Turn starts tell the model, and `reins doctor` the person.
 */
import { appendFileSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/** The record's file in the runtime folder. */
export const TAMPER_FILE = "tamper.jsonl";

/**
 * What happened: the daemon found its socket taken, a client met an answer without the daemon's proof, or a
 * hook found a project's `.reins` link into the state folder removed or replaced (base/config/reins-link.ts).
 */
export type TamperKind = "socket-taken" | "unproven-answer" | "reins-link";

/** One line of the record. */
export interface TamperEntry {
  /** When, epoch ms. */
  at: number;
  kind: TamperKind;
  /** The daemon's socket (for `reins-link`: the project's `.reins`). */
  socket: string;
  /** Who found it: `daemon <pid>`, `native client`, `sh client`, `hook`. */
  by: string;
  /** What could be said about the program that stood in (its pid and command when known). */
  detail: string;
}

/** Where the record of the runtime folder `runtime` is kept. */
export function tamperPath(runtime: string): string {
  return join(runtime, TAMPER_FILE);
}

/** Appends one entry (the file made 0600). Never throws: false when it could not be written. */
export function appendTamper(runtime: string, entry: TamperEntry): boolean {
  try {
    appendFileSync(tamperPath(runtime), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

function isEntry(value: unknown): value is TamperEntry {
  const e = value as Partial<TamperEntry> | null;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.at === "number" &&
    (e.kind === "socket-taken" || e.kind === "unproven-answer" || e.kind === "reins-link") &&
    typeof e.socket === "string" &&
    typeof e.by === "string" &&
    typeof e.detail === "string"
  );
}

/**
 * The entries not yet acknowledged, oldest first: one file read, none when there is no record. A line that
 * is not an entry counts as one of unknown kind, so a damaged record still says something happened.
 */
export function readTamper(runtime: string): TamperEntry[] {
  let text: string;
  try {
    text = readFileSync(tamperPath(runtime), "utf8");
  } catch {
    return [];
  }
  const entries: TamperEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = null;
    }
    entries.push(
      isEntry(parsed)
        ? parsed
        : {
            at: 0,
            kind: "socket-taken",
            socket: "",
            by: "",
            detail: `an unreadable line: ${line.slice(0, 80)}`,
          },
    );
  }
  return entries;
}

/**
 * A person has seen the record: its entries move to `tamper-acknowledged.jsonl` beside it (the record is
 * renamed aside first, so an entry appended meanwhile starts a new record), and turns starting from now say
 * nothing of them. Returns how many were acknowledged.
 */
export function acknowledgeTamper(runtime: string, at: number): number {
  const path = tamperPath(runtime);
  const aside = `${path}.${process.pid}.ack`;
  try {
    renameSync(path, aside);
  } catch {
    return 0;
  }
  const lines = readFileSync(aside, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  appendFileSync(
    join(runtime, "tamper-acknowledged.jsonl"),
    lines.map((line) => `${JSON.stringify({ acknowledgedAt: at, entry: line })}\n`).join(""),
    { mode: 0o600 },
  );
  rmSync(aside, { force: true });
  return lines.length;
}

function clock(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())} on ${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/**
 * What the model and the person are told of `entries`: one line per kind, naming the last time and how
 * many more, and saying that something on this machine tried to switch guarding off.
 */
export function tamperLines(entries: readonly TamperEntry[]): string[] {
  const lines: string[] = [];
  const taken = entries.filter((e) => e.kind === "socket-taken");
  const unproven = entries.filter((e) => e.kind === "unproven-answer");
  const more = (n: number) => (n > 1 ? ` (${n} times in all; the last shown)` : "");
  const last = (list: readonly TamperEntry[]) => list[list.length - 1]!;
  if (taken.length > 0)
    lines.push(
      `reins: at ${clock(last(taken).at)} a program that is not reins took the hook daemon's socket; reins took it back${more(taken.length)}. Something on this machine tried to switch guarding off.`,
    );
  if (unproven.length > 0)
    lines.push(
      `reins: at ${clock(last(unproven).at)} a hook call was answered on the hook daemon's socket by a program that could not prove it is reins'; reins answered the call itself${more(unproven.length)}. Something on this machine tried to switch guarding off.`,
    );
  const links = new Map<string, TamperEntry[]>();
  for (const e of entries)
    if (e.kind === "reins-link") links.set(e.socket, [...(links.get(e.socket) ?? []), e]);
  for (const list of links.values())
    lines.push(
      `reins: at ${clock(last(list).at)} ${last(list).detail.replace(/^reins: /, "")}${more(list.length)}`,
    );
  return lines;
}
