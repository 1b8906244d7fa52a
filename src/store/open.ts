import { isAbsolute, join } from "node:path";
import { ReinsError } from "../core/errors.js";
import type { Store } from "../core/store.js";
import { reinsDir } from "../shell/reins-dir.js";
import { MemoryStore } from "./memory.js";
import { SqliteStore } from "./sqlite.js";

/** Where the SQLite store lives in a project when nothing else is said. */
export function defaultStorePath(root: string): string {
  return join(root, ".reins", "reins.db");
}

/** A store spec with any password hidden, for messages. */
export function redact(spec: string): string {
  return spec.replace(
    /^(rediss?:\/\/)([^@/]*)@/,
    (_m, scheme: string, auth: string) =>
      `${scheme}${auth.includes(":") ? `${auth.split(":")[0]}:***` : "***"}@`,
  );
}

/**
 * Opens a store from a spec: `memory`, `sqlite:<path>` (relative to `root`), `redis://...` or
 * `rediss://...`. With no spec, the project's SQLite file `.reins/reins.db`.
 */
export async function openStore(spec: string | undefined, root: string): Promise<Store> {
  if (spec === undefined || spec === "" || spec === "sqlite") {
    reinsDir(root);
    return new SqliteStore(defaultStorePath(root));
  }
  if (spec === "memory") return new MemoryStore();
  if (spec.startsWith("sqlite:")) {
    const path = spec.slice("sqlite:".length);
    return new SqliteStore(path === ":memory:" || isAbsolute(path) ? path : join(root, path));
  }
  if (spec.startsWith("redis://") || spec.startsWith("rediss://")) {
    const { RedisStore } = await import("./redis.js");
    return RedisStore.connect(spec);
  }
  throw new ReinsError(
    "usage",
    `unknown store "${redact(spec)}": use sqlite:<path>, redis://host:port or rediss://...`,
  );
}
