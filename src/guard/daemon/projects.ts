/** The projects a hook daemon answers for: each one's services opened on first call, kept while used. */
import { isAbsolute, normalize } from "node:path";
import { loadPolicyCached } from "../../base/config/policy-cache.js";
import { recordServed } from "../../base/config/project-registry.js";
import { openServices, type HookServices } from "../hooks/hook-call.js";
import { existingHookSecret } from "../../base/config/hook-secret.js";
import { macMatches } from "./key.js";

/** What the daemon says of one project it holds open (`reins daemon status`). */
export interface ProjectSummary {
  root: string;
  /** The project variables its hooks came with (`REINS_*` names only, never their values). */
  variables: string[];
  /** The store's kind and location (credentials redacted). */
  store: string;
  /** Hook calls answered, by agent. */
  calls: Record<string, number>;
  /** When it last answered a call, epoch ms. */
  lastCallAt: number;
}

interface Entry {
  root: string;
  env: Record<string, string>;
  services: HookServices;
  calls: Record<string, number>;
  lastCallAt: number;
  policyCheckedAt: number;
}

/** Options of a ProjectPool; every field optional. */
export interface ProjectPoolOptions {
  /**
   * A project whose hooks have been quiet this long is closed (its store, its memory); its next call opens
   * it again.
   * @default 600_000 (10 minutes)
   */
  idleMs?: number;
  /**
   * At most this many projects are held open; past it, the one quiet longest is closed.
   * @default 64
   */
  maxOpen?: number;
  /**
   * How often a project's policy file is looked at again, so an edit applies without a restart.
   * @default 1_000
   */
  policyCheckMs?: number;
  /** The user's runtime folder, where the notices read the tamper record. @default from the project's variables */
  runtime?: string;
  /** Opens a project's services. @default openServices, as a hook in-process would (remote server included) */
  open?: (root: string, env: Record<string, string>) => Promise<HookServices>;
}

const defaultOpen = (runtime: string | undefined) => (root: string, env: Record<string, string>) =>
  openServices(root, env, {
    remote: true,
    requireConnection: false,
    ...(runtime !== undefined ? { runtime } : {}),
  });

/** Whether a root sent by a client names a project folder reins can use: absolute, normal, no NUL. */
export function isUsableRoot(root: string): boolean {
  return isAbsolute(root) && normalize(root) === root && !root.includes("\0") && root.length <= 4_096;
}

/**
 * The projects one daemon answers for, keyed by root and the project variables their hooks came with (a
 * session started with `REINS_STORE=redis://…` is answered with that store, as its hook in-process would
 * be). Each project's hook secret authenticates its calls; its services are opened once and kept while used.
 */
export class ProjectPool {
  private readonly entries = new Map<string, Entry>();
  private readonly opening = new Map<string, Promise<Entry>>();
  private readonly secrets = new Map<string, Buffer>();
  private readonly idleMs: number;
  private readonly maxOpen: number;
  private readonly policyCheckMs: number;
  private readonly open: (root: string, env: Record<string, string>) => Promise<HookServices>;

  constructor(options: ProjectPoolOptions = {}) {
    this.idleMs = options.idleMs ?? 600_000;
    this.maxOpen = options.maxOpen ?? 64;
    this.policyCheckMs = options.policyCheckMs ?? 1_000;
    this.open = options.open ?? defaultOpen(options.runtime);
  }

  /**
   * Whether `given` is the MAC of `parts` under the hook secret of the project at `root` (see protocol.ts,
   * callParts). The secret is read once and again only when a MAC does not match (a secret made anew).
   */
  verifies(root: string, parts: readonly (string | Buffer)[], given: unknown): boolean {
    const cached = this.secrets.get(root);
    if (cached !== undefined && macMatches(cached.toString(), parts, given)) return true;
    const secret = existingHookSecret(root);
    if (secret === "") {
      this.secrets.delete(root);
      return false;
    }
    this.secrets.set(root, Buffer.from(secret));
    return macMatches(secret, parts, given);
  }

  /** The services of the project at `root` for hooks sent with `env`, opened on first use. */
  async services(
    root: string,
    env: Record<string, string>,
    agent: string,
    now: number,
  ): Promise<HookServices> {
    const key = `${root}\n${JSON.stringify(env)}`;
    const entry = this.entries.get(key) ?? (await this.openEntry(key, root, env, now));
    entry.calls[agent] = (entry.calls[agent] ?? 0) + 1;
    entry.lastCallAt = now;
    if (now - entry.policyCheckedAt >= this.policyCheckMs) await this.refreshPolicy(key, entry, now);
    return this.entries.get(key)?.services ?? entry.services;
  }

  private openEntry(key: string, root: string, env: Record<string, string>, now: number): Promise<Entry> {
    const pending = this.opening.get(key);
    if (pending !== undefined) return pending;
    const opened = this.open(root, env).then(
      (services) => {
        this.opening.delete(key);
        const entry: Entry = {
          root,
          env,
          services,
          calls: Object.create(null) as Record<string, number>,
          lastCallAt: now,
          policyCheckedAt: now,
        };
        // A store that could not be opened is not kept: the next call tries to open it again.
        if (services.store.kind !== "unavailable") this.entries.set(key, entry);
        // What `reins status --all` lists, the daemon up or down (the state folder, as the tamper watch's).
        recordServed(root, { ...process.env, ...env }, now);
        void this.evictOverflow();
        return entry;
      },
      (error: unknown) => {
        this.opening.delete(key);
        throw error;
      },
    );
    this.opening.set(key, opened);
    return opened;
  }

  /**
   * Takes a changed policy file into account: a new policy replaces the old one; a new store spec reopens the
   * project. A bad config never throws: its invalid parts take their defaults, as for a hook in-process, and
   * the replies' notices say so.
   */
  private async refreshPolicy(key: string, entry: Entry, now: number): Promise<void> {
    entry.policyCheckedAt = now;
    const policy = loadPolicyCached({ cwd: entry.root, env: entry.env });
    if (JSON.stringify(policy) === JSON.stringify(entry.services.policy)) return;
    if (policy.store === entry.services.policy.store) {
      entry.services = { ...entry.services, policy };
      return;
    }
    this.entries.delete(key);
    await entry.services.store.close();
    await this.openEntry(key, entry.root, entry.env, now);
  }

  private async evictOverflow(): Promise<void> {
    while (this.entries.size > this.maxOpen) {
      let oldest: [string, Entry] | undefined;
      for (const pair of this.entries)
        if (oldest === undefined || pair[1].lastCallAt < oldest[1].lastCallAt) oldest = pair;
      if (oldest === undefined) return;
      this.entries.delete(oldest[0]);
      await oldest[1].services.store.close();
    }
  }

  /** Closes the projects quiet for longer than the idle time. Returns how many were closed. */
  async sweep(now: number): Promise<number> {
    let closed = 0;
    for (const [key, entry] of [...this.entries]) {
      if (now - entry.lastCallAt < this.idleMs) continue;
      this.entries.delete(key);
      this.secrets.delete(entry.root);
      await entry.services.store.close();
      closed += 1;
    }
    return closed;
  }

  /** The projects held open, most recently used first. */
  list(): ProjectSummary[] {
    return [...this.entries.values()]
      .sort((a, b) => b.lastCallAt - a.lastCallAt)
      .map((e) => ({
        root: e.root,
        variables: Object.keys(e.env).sort(),
        store: `${e.services.store.kind} ${e.services.store.location}`,
        calls: { ...e.calls },
        lastCallAt: e.lastCallAt,
      }));
  }

  /** Closes every project's store. */
  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(entries.map((e) => e.services.store.close()));
  }
}
