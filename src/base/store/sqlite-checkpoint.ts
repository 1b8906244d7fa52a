/**
 * SQLite checkpoints off the thread that answers: in a long-lived process (the hook daemon, `reins serve`)
 * a store turns SQLite's inline autocheckpoint off, and after its commits a worker thread, with a connection
 * of its own to the file, runs a passive checkpoint (which never blocks the writer) at most every
 * CHECKPOINT_EVERY_MS. The checkpoint's copy and fsync then never stall a hook's answer (docs/performance.md).
 */
import { Worker } from "node:worker_threads";

/** The least time between two checkpoints of one file, ms. */
const CHECKPOINT_EVERY_MS = 1_000;

let enabled = false;

/** Makes the stores this process opens from now on checkpoint in the background (a long-lived process). */
export function checkpointInBackground(on = true): void {
  enabled = on;
}

/** Whether stores opened now checkpoint in the background. */
export function backgroundCheckpoints(): boolean {
  return enabled;
}

/** Connections the worker keeps open between checkpoints; a file past them is opened again when it is due. */
const OPEN_CONNECTIONS = 8;

// The worker: a connection per file, opened on its checkpoint and closed when its store closes or when
// OPEN_CONNECTIONS others were used since.
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const OPEN = ${OPEN_CONNECTIONS};
const Database = require(workerData.main);
const dbs = new Map();
parentPort.on("message", ({ path, close, exit }) => {
  if (exit) {
    for (const db of dbs.values()) db.close();
    process.exit(0);
  }
  let db = dbs.get(path);
  try {
    if (close) {
      dbs.delete(path);
      if (db) db.close();
    } else {
      if (!db) {
        db = new Database(path, { fileMustExist: true, timeout: 0, ...(workerData.addon ? { nativeBinding: workerData.addon } : {}) });
        db.pragma("cache_size = -64");
      }
      // The connections used last kept, at most OPEN (each holds memory): the oldest closed first.
      dbs.delete(path);
      dbs.set(path, db);
      if (dbs.size > OPEN) {
        const [oldest, old] = dbs.entries().next().value;
        dbs.delete(oldest);
        old.close();
      }
      db.pragma("wal_checkpoint(PASSIVE)");
    }
  } catch {
    // a busy or vanished file: the next commit asks again
  }
  parentPort.postMessage(path);
});
`;

/** The worker that checkpoints every background store of this process: started on first use, never keeping the process alive. */
export class Checkpointer {
  static #shared: Checkpointer | undefined;
  readonly #worker: Worker;
  readonly #inFlight = new Set<string>();
  readonly #last = new Map<string, number>();
  /** The stores open on it: the worker ends with the last one (an idle worker's port would keep the process alive). */
  #open = 0;

  private constructor(driver: { main: string; addon: string | undefined }) {
    // A worker that only asks SQLite for checkpoints: a young generation of 1 MB, not V8's default.
    this.#worker = new Worker(WORKER, {
      eval: true,
      workerData: driver,
      resourceLimits: { maxYoungGenerationSizeMb: 1 },
    });
    this.#worker.unref();
    this.#worker.on("message", (path: string) => this.#inFlight.delete(path));
    this.#worker.on("error", () => (Checkpointer.#shared = undefined));
  }

  /** The process's checkpointer, started with better-sqlite3's entry and addon paths. */
  static shared(driver: { main: string; addon: string | undefined }): Checkpointer {
    Checkpointer.#shared ??= new Checkpointer(driver);
    Checkpointer.#shared.#open += 1;
    return Checkpointer.#shared;
  }

  /** Asks for a passive checkpoint of `path` unless one runs or ran less than CHECKPOINT_EVERY_MS ago. */
  committed(path: string, now = Date.now()): void {
    if (this.#inFlight.has(path) || now - (this.#last.get(path) ?? 0) < CHECKPOINT_EVERY_MS) return;
    this.#inFlight.add(path);
    this.#last.set(path, now);
    this.#worker.postMessage({ path });
  }

  /** Lets go of the worker's connection to `path` (its store closed). */
  closed(path: string): void {
    this.#last.delete(path);
    this.#worker.postMessage({ path, close: true });
    this.#open -= 1;
    if (this.#open > 0) return;
    // The worker closes the file's connection first: messages are handled in order.
    if (Checkpointer.#shared === this) Checkpointer.#shared = undefined;
    this.#worker.postMessage({ exit: true });
  }
}
