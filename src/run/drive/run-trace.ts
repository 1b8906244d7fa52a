/** The trace of a run: one JSON line per step of the control core and per outside interaction. */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, ftruncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { RunAction, RunDecision, RunEvent } from "../control/types.js";
import { reinsDir } from "../../base/config/reins-dir.js";
import { ReinsError } from "../../base/core/errors.js";

/** `.reins/runs/<run>`: the run's trace, report and worktrees. */
export function runDir(root: string, run: string): string {
  return join(reinsDir(root), "runs", run);
}

/** An action as handed out, with the key its results are recorded under. */
export interface KeyedAction {
  key: string;
  action: RunAction;
}

/** What the run was started with, for the report and for replay. */
export interface RunMeta {
  run: string;
  plan: string;
  agent: string;
  branch: string;
  base: string;
  worktrees: boolean;
  version: 1;
  /** The options the run was started with, which a resume keeps (absent in runs of older versions). */
  options?: RunStartOptions;
}

/** The options of `reins run` that a resumed run keeps as they were given at its start. */
export interface RunStartOptions {
  /** `--max-turns` of a driven Claude Code. */
  maxTurns?: number;
  /** `--agent-timeout`, in ms. */
  agentTimeoutMs?: number;
  /** `--agent-idle`, in ms. */
  agentIdleMs?: number;
}

/** One line of a run's trace. */
export type RunTraceLine =
  | { t: "meta"; meta: RunMeta }
  /** One event fed to the core (answering the action `key`), and what the core decided and asked. */
  | { t: "step"; n: number; key: string; event: RunEvent; decisions: RunDecision[]; actions: KeyedAction[] }
  /** One outside interaction made while carrying out the action `key`, with its result. */
  | { t: "io"; key: string; op: string; result: unknown }
  /** Whether the agent works in a box from here on, as said when the run started or resumed. */
  | { t: "box"; line: string };

/**
 * Appends trace lines to a file, one `write` per line. A line is whole or absent after a crash: the
 * checkpoint in the store records how many bytes were written when it was taken, and a resumed run cuts
 * the file back to that length before it goes on.
 */
export class TraceWriter {
  readonly #fd: number;
  #bytes: number;

  constructor(
    readonly path: string,
    /** Cut the file to this many bytes first (a resumed run); omitted: a new file. */
    keep?: number,
  ) {
    this.#fd = openSync(path, keep === undefined ? "w" : "r+");
    if (keep !== undefined) ftruncateSync(this.#fd, keep);
    this.#bytes = keep ?? 0;
  }

  /** Bytes written so far: where a resumed run cuts the file back to. */
  get bytes(): number {
    return this.#bytes;
  }

  write(line: RunTraceLine): void {
    const buffer = Buffer.from(`${JSON.stringify(line)}\n`);
    let offset = 0;
    while (offset < buffer.length)
      offset += writeSync(this.#fd, buffer, offset, buffer.length - offset, this.#bytes + offset);
    this.#bytes += buffer.length;
  }

  /** Forces what was written to disk: called before the checkpoint that points past it is saved. */
  sync(): void {
    fsyncSync(this.#fd);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** A run's trace, read back: its meta line, its steps in order, and the outside results per action key. */
export interface ReadTrace {
  meta: RunMeta;
  steps: Extract<RunTraceLine, { t: "step" }>[];
  io: Map<string, Extract<RunTraceLine, { t: "io" }>[]>;
  /** The box lines, one per start and resume (none in a trace of an older reins). */
  boxes?: string[];
}

/** Reads a run's trace; a line that is not JSON or not a trace line is named with its number. */
export function readRunTrace(path: string): ReadTrace {
  if (!existsSync(path)) throw new ReinsError("usage", `no run trace at ${path}`);
  const text = readFileSync(path, "utf8");
  let meta: RunMeta | null = null;
  const steps: ReadTrace["steps"] = [];
  const io: ReadTrace["io"] = new Map();
  const boxes: string[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    if (raw === undefined || raw.trim() === "") continue;
    let line: RunTraceLine;
    try {
      line = JSON.parse(raw) as RunTraceLine;
    } catch {
      throw new ReinsError("usage", `${path}:${i + 1}: not JSON`);
    }
    if (line === null || typeof line !== "object")
      throw new ReinsError("usage", `${path}:${i + 1}: not a run trace line`);
    if (line.t === "meta") meta = line.meta;
    else if (line.t === "step") steps.push(line);
    else if (line.t === "io") {
      const list = io.get(line.key) ?? [];
      list.push(line);
      io.set(line.key, list);
    } else if (line.t === "box") boxes.push(String(line.line));
    else throw new ReinsError("usage", `${path}:${i + 1}: not a run trace line`);
  }
  if (meta === null) throw new ReinsError("usage", `${path}: not a run trace (no meta line)`);
  return { meta, steps, io, boxes };
}
