import { randomUUID } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../core/store.js";

interface SpoolFile {
  scope: string;
  events: readonly ReinsEvent[];
}

/** A spooled batch, or null when the text is not one (torn, damaged, or not written by a spool). */
function parseBatch(text: string): SpoolFile | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  const batch = data as Partial<SpoolFile> | null;
  if (batch === null || typeof batch !== "object" || typeof batch.scope !== "string") return null;
  if (!Array.isArray(batch.events)) return null;
  // Every spooled event has an id, so a batch delivered twice counts once; one without is not the spool's.
  const valid = batch.events.every(
    (e: unknown) => e !== null && typeof e === "object" && typeof (e as { id?: unknown }).id === "string",
  );
  return valid ? (batch as SpoolFile) : null;
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

  /** Writes a batch durably (fsync) before the caller answers the agent; throws, leaving nothing, when it cannot. */
  add(scope: string, events: readonly ReinsEvent[]): void {
    mkdirSync(this.dir, { recursive: true });
    const name = `${Date.now().toString().padStart(15, "0")}-${process.pid}-${randomUUID()}.json`;
    const path = join(this.dir, name);
    const fd = openSync(path, "wx", 0o600);
    try {
      // A full disk may take part of a write without an error: write until all is written, or it fails.
      const bytes = Buffer.from(JSON.stringify({ scope, events } satisfies SpoolFile));
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      fsyncSync(fd);
    } catch (error) {
      // A full disk leaves a torn or empty file: take it back, so nothing pretends to hold the events.
      closeSync(fd);
      rmSync(path, { force: true });
      throw error;
    }
    closeSync(fd);
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

  /**
   * Delivers every spooled batch to `store`, oldest first, and says how many events it delivered and how
   * many files it set aside. It stops at the first batch the store cannot take because it is down (the
   * rest wait); a file that is damaged, or whose events the store refuses for what they hold, is moved to
   * `rejected/` so it never stands in the way of the batches after it.
   */
  async drain(store: Store, policy: Policy): Promise<{ delivered: number; rejected: number }> {
    const drained = { delivered: 0, rejected: 0 };
    if (this.#pending === false) return drained;
    for (const file of this.files()) {
      const path = join(this.dir, file);
      let text: string;
      try {
        text = readFileSync(path, "utf8");
      } catch {
        continue; // another process delivered and removed it meanwhile
      }
      const batch = parseBatch(text);
      try {
        if (batch === null) throw new ReinsError("invalid_event", `${file} is not a spooled batch`);
        await store.append(batch.scope, batch.events, policy);
        drained.delivered += batch.events.length;
        unlinkSync(path);
      } catch (error) {
        if (ReinsError.is(error) && error.code === "store_unavailable") throw error;
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // delivered by another drainer too
        this.#reject(path, file);
        drained.rejected += 1;
      }
    }
    this.#pending = false;
    return drained;
  }

  /** Moves a batch that can never be delivered out of the way, keeping it for a person to look at. */
  #reject(path: string, file: string): void {
    try {
      mkdirSync(join(this.dir, "rejected"), { recursive: true });
      renameSync(path, join(this.dir, "rejected", file));
    } catch {
      // Another drainer moved it, or the disk refuses: it is retried, and set aside, next time.
    }
  }
}
