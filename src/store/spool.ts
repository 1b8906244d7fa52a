import { randomUUID } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { ReinsEvent } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../core/store.js";

interface SpoolFile {
  scope: string;
  events: readonly ReinsEvent[];
}

/**
 * Events that could not reach the store, kept on local disk (`.reins/spool/`, one file per batch) until it
 * answers again. Every spooled event has an id, so delivering a file twice (two processes draining at
 * once, a crash between append and delete) still applies each event exactly once.
 */
export class Spool {
  readonly dir: string;
  /** Whether files may be waiting: checked once at start, set when this process spools. */
  #pending: boolean | null = null;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Writes a batch durably (fsync) before the caller answers the agent. */
  add(scope: string, events: readonly ReinsEvent[]): void {
    mkdirSync(this.dir, { recursive: true });
    const name = `${Date.now().toString().padStart(15, "0")}-${process.pid}-${randomUUID()}.json`;
    const fd = openSync(join(this.dir, name), "wx", 0o600);
    try {
      writeSync(fd, JSON.stringify({ scope, events } satisfies SpoolFile));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.#pending = true;
  }

  /** Spooled files, oldest first. */
  files(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => f.endsWith(".json"))
        .sort();
    } catch {
      return [];
    }
  }

  /** Delivers every spooled batch to `store`, oldest first; returns how many events were delivered. Stops at the first failure. */
  async drain(store: Store, policy: Policy): Promise<number> {
    if (this.#pending === false) return 0;
    let delivered = 0;
    for (const file of this.files()) {
      const path = join(this.dir, file);
      let batch: SpoolFile;
      try {
        batch = JSON.parse(readFileSync(path, "utf8")) as SpoolFile;
      } catch {
        continue; // another process delivered and removed it meanwhile
      }
      await store.append(batch.scope, batch.events, policy);
      delivered += batch.events.length;
      try {
        unlinkSync(path);
      } catch {
        // already removed by another drainer; the ids made its delivery idempotent
      }
    }
    this.#pending = false;
    return delivered;
  }
}
