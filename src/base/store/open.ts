/** Opens the store a spec names (memory, SQLite or Redis); the project's SQLite file by default. */
import { isAbsolute, join } from "node:path";
import { ReinsError } from "../core/errors.js";
import type { Store } from "../core/store.js";
import { reinsDir } from "../config/reins-dir.js";
import { MemoryStore } from "./memory.js";
import { redact } from "./redact.js";
import { SqliteStore } from "./sqlite.js";

/** Where the SQLite store lives in a project when nothing else is said. */
export function defaultStorePath(root: string): string {
  return join(root, ".reins", "reins.db");
}

/** How a store is opened. */
export interface OpenOptions {
  /**
   * Whether a Redis store must answer before it is returned. With `false` (a long-lived daemon, which must
   * come up during an outage to answer hooks fail-open or fail-closed and spool) it is returned at once and
   * every call fails with `store_unavailable` until Redis answers. @default true
   */
  requireConnection?: boolean;
}

/** Store specs the Redis store opens: one server, or a Redis Cluster; with TLS or without. */
const REDIS_SPEC = /^rediss?(\+cluster)?:\/\//i;

/**
 * Opens a store from a spec: `memory`, `sqlite:<path>` (relative to `root`), `redis://...`,
 * `rediss://...`, or a Redis Cluster `redis+cluster://host:port,host:port` (`rediss+cluster://...`). With no
 * spec, the project's SQLite file `.reins/reins.db`.
 */
export async function openStore(
  spec: string | undefined,
  root: string,
  options: OpenOptions = {},
): Promise<Store> {
  if (spec === undefined || spec === "" || spec === "sqlite") {
    reinsDir(root);
    return new SqliteStore(defaultStorePath(root));
  }
  if (spec === "memory") return new MemoryStore();
  if (spec.startsWith("sqlite:")) {
    const path = spec.slice("sqlite:".length);
    return new SqliteStore(path === ":memory:" || isAbsolute(path) ? path : join(root, path));
  }
  if (REDIS_SPEC.test(spec)) {
    const { RedisStore } = await import("./redis.js");
    return RedisStore.connect(spec, options.requireConnection === false ? { requireConnection: false } : {});
  }
  throw new ReinsError(
    "usage",
    `unknown store "${redact(spec)}": use sqlite:<path>, redis://host:port, rediss://... or redis+cluster://host:port,...`,
  );
}
