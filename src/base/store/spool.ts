/** The spool (reins/spool): events kept on disk while the store is down, delivered exactly once later. */
import { createHash, randomUUID } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/reins-event.js";
import type { Pipeline } from "../core/pipeline.js";
import type { Policy } from "../core/policy.js";
import type { Store } from "../core/store.js";

interface SpoolFile {
  scope: string;
  events: readonly ReinsEvent[];
}

/** Spooled batches of one scope delivered in one append, and the files they came from. */
interface Delivery {
  scope: string;
  events: ReinsEvent[];
  files: string[];
}

/** What a drain did: events delivered, files set aside (damaged, refused or expired), of them expired. */
type Drained = { delivered: number; rejected: number; expired: number };

/** Most events one append of a drain carries (a reins server takes up to 1,000 in one decide). */
const MAX_DELIVERY = 500;
/** Most files one pass of a drain reads before it delivers them. */
const MAX_READ = 2_000;
/**
 * How many drains must refuse a batch (for other than the store being down), over how long at least (ms),
 * before it is set aside: a hook call drains on every call, and a passing fault may outlast a few of them.
 */
const REFUSALS = 3;
const REFUSAL_MS = 30_000;
/** The suffix of the file beside a batch that counts the drains that refused it, and says the last why. */
const REFUSED = ".refused";

export interface DrainOptions {
  /** When to stop delivering (epoch ms), leaving the rest for a later drain. @default no limit */
  deadline?: number;
  /**
   * The scope the caller is about to write: its spooled batches are delivered first, whatever the
   * deadline, so its new events never reach the store before its older ones.
   */
  scope?: string;
  /** The guards that decide the delivered events, as the caller's own. @default the built-in ones */
  guards?: Pipeline;
}

/**
 * One drain's progress: what it did, the scopes it holds back behind a refused batch (their later batches
 * wait, so none overtakes it), and the files with a count of refusals beside them.
 */
interface Pass {
  drained: Drained;
  held: Set<string>;
  refused: Set<string>;
}

/** What decides delivered events: the policy, and the guards when they are not the built-in ones. */
interface Decide {
  policy: Policy;
  guards: Pipeline | undefined;
}

/** Why a store refused a batch, as one line: the error's code and message. */
function whyOf(error: unknown): string {
  const code = ReinsError.is(error) ? error.code : ((error as NodeJS.ErrnoException | null)?.code ?? "error");
  const message = error instanceof Error ? error.message : String(error);
  return `${code}: ${message}`.replace(/\s+/g, " ").trim();
}

/** Batches this process has spooled: orders its files within one millisecond. */
let spooled = 0;

/** The part of a spool file's name that says its scope, so one scope's files are found without reading any. */
const scopeKey = (scope: string) => createHash("sha256").update(scope).digest("hex").slice(0, 12);

/** When a spool file was written, epoch ms: its name starts with the time (see `add`). */
const spooledAt = (file: string) => Number(file.slice(0, 15)) || 0;

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
  /**
   * The drains of this process take turns, so none overtakes another's files. Each link says how the
   * drain before it ended: the store found down, or undefined.
   */
  #queue: Promise<ReinsError | undefined> = Promise.resolve(undefined);
  /** Drains queued or under way. */
  #waiting = 0;

  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Writes a batch durably (fsync) before the caller answers the agent; throws, leaving nothing, when it
   * cannot. It is written under a name drains do not read and renamed into place once whole, so a drain in
   * another process never takes a batch still being written for a damaged one.
   */
  add(scope: string, events: readonly ReinsEvent[]): void {
    mkdirSync(this.dir, { recursive: true });
    // Sorted by name is spooled order: the time, then this process's count within the millisecond.
    const name = `${Date.now().toString().padStart(15, "0")}-${process.pid}-${(spooled++).toString().padStart(12, "0")}-${scopeKey(scope)}-${randomUUID()}.json`;
    const path = join(this.dir, name);
    const partial = `${path}.partial`;
    const fd = openSync(partial, "wx", 0o600);
    try {
      // A full disk may take part of a write without an error: write until all is written, or it fails.
      const bytes = Buffer.from(JSON.stringify({ scope, events } satisfies SpoolFile));
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      fsyncSync(fd);
      closeSync(fd);
      renameSync(partial, path);
    } catch (error) {
      // A full disk leaves a torn or empty file: take it back, so nothing pretends to hold the events.
      try {
        closeSync(fd);
      } catch {
        // closed already
      }
      rmSync(partial, { force: true });
      throw error;
    }
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
   * The events of `scope`'s batches waiting to be delivered, oldest first (damaged batches and those set
   * aside left out). Reads only the files whose names say the scope.
   */
  waiting(scope: string): ReinsEvent[] {
    const key = `-${scopeKey(scope)}-`;
    const events: ReinsEvent[] = [];
    for (const file of this.files()) {
      if (!file.includes(key)) continue;
      let text: string;
      try {
        text = readFileSync(join(this.dir, file), "utf8");
      } catch {
        continue; // delivered or set aside meanwhile
      }
      const batch = parseBatch(text);
      if (batch !== null && batch.scope === scope) events.push(...batch.events);
    }
    return events;
  }

  /**
   * Delivers spooled batches to `store`, each scope's in the order they were spooled, and says how many
   * events it delivered and how many files it set aside. It stops at the first delivery the store cannot
   * take because it is down (the rest wait), and at `options.deadline`, leaving the rest to the next drain:
   * a hook call must not spend its agent's patience delivering a long outage's backlog. Only
   * `options.scope`'s own batches go first and whatever the deadline: the caller writes that scope next.
   * A file that is damaged, or whose events the store refuses for what they hold, is moved to `rejected/`
   * so it never stands in the way of the batches after it.
   *
   * Batches of one scope go to the store together, up to MAX_DELIVERY events in one append: an outage
   * leaves a file per hook call, and one round trip per file took seconds to catch up after seconds down.
   * Drains in one process take turns. The folder is listed on every drain (a few µs), as other processes
   * spool into it too.
   */
  drain(store: Store, policy: Policy, options: DrainOptions = {}): Promise<Drained> {
    // A call that came while another drain ran, and found the store down, fails at once as that one did:
    // waiting out the store's timeout once per queued call would add them up. A later call tries afresh.
    const queued = this.#waiting > 0;
    this.#waiting += 1;
    const run = this.#queue
      .then((down) => {
        if (queued && down !== undefined) throw down;
        return this.#drain(store, policy, options);
      })
      .finally(() => (this.#waiting -= 1));
    this.#queue = run.then(
      () => undefined,
      (error: unknown) => (ReinsError.is(error) && error.code === "store_unavailable" ? error : undefined),
    );
    return run;
  }

  async #drain(store: Store, policy: Policy, options: DrainOptions): Promise<Drained> {
    const pass: Pass = {
      drained: { delivered: 0, rejected: 0, expired: 0 },
      held: new Set(),
      refused: new Set(),
    };
    const files = this.#list(pass.refused);
    if (files.length === 0) return pass.drained;
    const key = options.scope === undefined ? null : `-${scopeKey(options.scope)}-`;
    const own = key === null ? [] : files.filter((f) => f.includes(key));
    const decide = { policy, guards: options.guards };
    await this.#deliver(store, decide, own, Number.POSITIVE_INFINITY, pass);
    const rest = key === null ? files : files.filter((f) => !f.includes(key));
    await this.#deliver(store, decide, rest, options.deadline ?? Number.POSITIVE_INFINITY, pass);
    return pass.drained;
  }

  /** The spooled files, oldest first, noting in `refused` the files a drain before was refused for. */
  #list(refused: Set<string>): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const files = names.filter((f) => f.endsWith(".json"));
    const batches = new Set(files);
    for (const name of names) {
      if (!name.endsWith(REFUSED)) continue;
      const file = name.slice(0, -REFUSED.length);
      // A count left beside no batch: another drainer delivered it before it saw the count.
      if (batches.has(file)) refused.add(file);
      else rmSync(join(this.dir, name), { force: true });
    }
    return files.sort();
  }

  /** Delivers `files` in order until `deadline`, but for the scopes a refusal holds back. */
  async #deliver(
    store: Store,
    decide: Decide,
    files: readonly string[],
    deadline: number,
    pass: Pass,
  ): Promise<void> {
    for (let at = 0; at < files.length && Date.now() < deadline;) {
      const { deliveries, next } = this.#read(files, at, pass.drained, store.exactlyOnceMs);
      at = next;
      for (const delivery of deliveries) {
        if (Date.now() >= deadline) return;
        if (pass.held.has(delivery.scope)) continue;
        try {
          await store.append(delivery.scope, delivery.events, decide.policy, decide.guards);
          pass.drained.delivered += delivery.events.length;
          for (const file of delivery.files) this.#delivered(file, pass);
        } catch (error) {
          if (ReinsError.is(error) && error.code === "store_unavailable") throw error;
          // Refused: deliver them one by one, so only the one refused is held back.
          if (delivery.files.length > 1) await this.#deliverEach(store, decide, delivery, pass);
          else this.#refuse(delivery, delivery.files[0] ?? "", error, pass);
        }
      }
    }
  }

  /** Removes a delivered file, and its count of refusals when it has one. */
  #delivered(file: string, pass: Pass): void {
    rmSync(join(this.dir, file), { force: true });
    if (pass.refused.has(file)) rmSync(join(this.dir, `${file}${REFUSED}`), { force: true });
  }

  /**
   * Notes that the store refused `file` for other than being down. A refusal may be the store's passing
   * fault (a state it read amiss, a bug the next read does not meet), so the file waits for the next drain,
   * and its scope's later files wait behind it, in order; refused at REFUSALS drains over REFUSAL_MS, it is
   * what it holds, and it is set aside, so it never stands in the way of the batches after it.
   */
  #refuse(delivery: Delivery, file: string, error: unknown, pass: Pass): void {
    const counter = join(this.dir, `${file}${REFUSED}`);
    const now = Date.now();
    let count = 0;
    let first = now;
    if (pass.refused.has(file)) {
      try {
        const [n = "", at = ""] = readFileSync(counter, "utf8").split("\n");
        count = Number.parseInt(n, 10) || 0;
        first = Math.min(now, Number.parseInt(at, 10) || now);
      } catch {
        // gone: delivered or set aside by another drainer meanwhile
      }
    }
    const why = whyOf(error);
    if (count + 1 >= REFUSALS && now - first >= REFUSAL_MS) {
      this.#reject(
        [file],
        pass.drained,
        `refused at ${count + 1} drains over ${now - first} ms; the last: ${why}`,
      );
      rmSync(counter, { force: true });
      return;
    }
    pass.held.add(delivery.scope);
    try {
      writeFileSync(counter, `${count + 1}\n${first}\n${why}\n`, { mode: 0o600 });
      pass.refused.add(file);
    } catch {
      // The disk refuses: the refusal is counted again next time.
    }
  }

  /**
   * Reads spooled files from `files[at]` on, at most MAX_READ of them, into deliveries: the batches of each
   * scope in order, joined up to MAX_DELIVERY events. Damaged files are set aside on the way, and so are
   * batches spooled longer ago than the store remembers event ids (`window`, ms): their events may have
   * reached it before they were spooled, and delivered now they could be counted twice.
   */
  #read(files: readonly string[], at: number, drained: Drained, window: number | undefined) {
    const lastOf = new Map<string, Delivery>();
    const deliveries: Delivery[] = [];
    const end = Math.min(files.length, at + MAX_READ);
    for (let i = at; i < end; i++) {
      const file = files[i] ?? "";
      if (window !== undefined && Date.now() - spooledAt(file) > window) {
        drained.expired += 1;
        this.#reject([file], drained, `spooled longer ago than the store remembers event ids (${window} ms)`);
        continue;
      }
      let text: string;
      try {
        text = readFileSync(join(this.dir, file), "utf8");
      } catch {
        continue; // another process delivered and removed it meanwhile
      }
      const batch = parseBatch(text);
      if (batch === null) {
        this.#reject([file], drained, "not a spooled batch (torn or damaged)");
        continue;
      }
      const last = lastOf.get(batch.scope);
      if (last !== undefined && last.events.length + batch.events.length <= MAX_DELIVERY) {
        last.events.push(...batch.events);
        last.files.push(file);
      } else {
        const delivery = { scope: batch.scope, events: [...batch.events], files: [file] };
        lastOf.set(batch.scope, delivery);
        deliveries.push(delivery);
      }
    }
    return { deliveries, next: end };
  }

  /**
   * Delivers a delivery's files one by one, up to the first the store refuses (see `#refuse`); stops when
   * the store is down.
   */
  async #deliverEach(
    store: Store,
    { policy, guards }: Decide,
    delivery: Delivery,
    pass: Pass,
  ): Promise<void> {
    for (const file of delivery.files) {
      const path = join(this.dir, file);
      let batch: SpoolFile | null;
      try {
        batch = parseBatch(readFileSync(path, "utf8"));
      } catch {
        continue; // delivered or set aside by another drainer meanwhile
      }
      if (batch === null) {
        this.#reject([file], pass.drained, "not a spooled batch (torn or damaged)");
        continue;
      }
      try {
        await store.append(batch.scope, batch.events, policy, guards);
      } catch (error) {
        if (ReinsError.is(error) && error.code === "store_unavailable") throw error;
        this.#refuse(delivery, file, error, pass);
        if (pass.held.has(delivery.scope)) return;
        continue;
      }
      pass.drained.delivered += batch.events.length;
      this.#delivered(file, pass);
    }
  }

  /**
   * Moves batches that can never be delivered out of the way, keeping them for a person to look at, each
   * with why beside it (`<file>.why`, one line).
   */
  #reject(files: readonly string[], drained: Drained, why: string): void {
    for (const file of files) {
      drained.rejected += 1;
      try {
        const rejected = join(this.dir, "rejected");
        mkdirSync(rejected, { recursive: true });
        renameSync(join(this.dir, file), join(rejected, file));
        writeFileSync(join(rejected, `${file}.why`), `${why}\n`, { mode: 0o600 });
      } catch {
        // Another drainer moved it, or the disk refuses: it is retried, and set aside, next time.
      }
    }
  }
}
