/** Redis URLs: one server (`redis://`, `rediss://`) or a Redis Cluster (`redis+cluster://`, `rediss+cluster://`). */
import { ReinsError } from "../core/errors.js";
import { redact } from "./redact.js";

/** What a Redis URL names. */
export interface RedisTarget {
  /** One server, or the seed nodes of a cluster. */
  cluster: boolean;
  tls: boolean;
  username: string;
  password: string;
  /** A cluster's seed nodes; empty for one server (ioredis reads its URL itself). */
  nodes: { host: string; port: number }[];
  /** `?trim=off` keeps every record of every scope (an audit log, at ~370 bytes an event); absent: not said. */
  trim?: boolean;
  /** The URL as ioredis takes it: reins' own parameters (`trim`) left out. */
  url: string;
}

/** Takes reins' own `trim=on|off` out of a URL's query; what is left goes to ioredis. */
function ownParameters(url: string, shown: string): { url: string; trim?: boolean } {
  const match = /^([^?#]*)\?([^#]*)(#.*)?$/.exec(url);
  if (match === null) return { url };
  const kept: string[] = [];
  let trim: boolean | undefined;
  for (const pair of (match[2] ?? "").split("&")) {
    const [name, value] = pair.split("=");
    if (name !== "trim") {
      if (pair !== "") kept.push(pair);
      continue;
    }
    if (value !== "on" && value !== "off")
      throw new ReinsError(
        "usage",
        `bad trim "${value ?? ""}" in Redis URL "${shown}": use trim=on or trim=off`,
      );
    trim = value === "on";
  }
  const rest = `${match[1] ?? ""}${kept.length > 0 ? `?${kept.join("&")}` : ""}${match[3] ?? ""}`;
  return trim === undefined ? { url: rest } : { url: rest, trim };
}

export const REDIS_USAGE =
  "use redis://[user:password@]host[:port][/db], rediss://... (TLS), or redis+cluster://[user:password@]host:port[,host:port...] (rediss+cluster:// for TLS)";

const SCHEMES = new Set(["redis", "rediss", "redis+cluster", "rediss+cluster"]);

/** A URL fit for messages: `redact` for redis URLs, and any user info hidden in anything else. */
export function safeUrl(url: string): string {
  const redacted = redact(url);
  return redacted !== url ? redacted : url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1***@");
}

function checkPort(port: string | undefined, shown: string): number | undefined {
  if (port === undefined) return undefined;
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65_535) {
    throw new ReinsError(
      "usage",
      `bad port "${port}" in Redis URL "${shown}": a port is a number from 1 to 65535`,
    );
  }
  return Number(port);
}

/** Checks a Redis URL before ioredis sees it (ioredis would quietly accept nonsense). */
export function parseRedisUrl(url: string): RedisTarget {
  const shown = safeUrl(url);
  const parts = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)/i.exec(url);
  if (parts === null) throw new ReinsError("usage", `invalid Redis URL "${shown}": ${REDIS_USAGE}`);
  const scheme = (parts[1] ?? "").toLowerCase();
  if (!SCHEMES.has(scheme)) {
    throw new ReinsError("usage", `unsupported scheme "${scheme}:" in Redis URL "${shown}": ${REDIS_USAGE}`);
  }
  const cluster = scheme.endsWith("+cluster");
  const [user = "", pass = ""] = (parts[2] ?? "").split(/:(.*)/s);
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new ReinsError("usage", `invalid Redis URL "${shown}": ${REDIS_USAGE}`);
    }
  };
  const nodes: { host: string; port: number }[] = [];
  const authorities = (parts[3] ?? "").split(",");
  if (!cluster && authorities.length > 1)
    throw new ReinsError("usage", `Redis URL "${shown}" names several hosts: ${REDIS_USAGE}`);
  for (const authority of authorities) {
    const node = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(authority);
    const host = node?.[1] ?? "";
    if (host === "") throw new ReinsError("usage", `Redis URL "${shown}" has no host: ${REDIS_USAGE}`);
    const port = checkPort(node?.[2], shown);
    nodes.push({ host: host.replace(/^\[(.*)\]$/, "$1"), port: port ?? 6379 });
  }
  const path = parts[4] ?? "";
  if (cluster ? !/^\/?0?$/.test(path) : path !== "" && path !== "/" && !/^\/\d+$/.test(path)) {
    throw new ReinsError(
      "usage",
      cluster
        ? `Redis Cluster URL "${shown}" names a database: a cluster has only database 0`
        : `bad database "${path.slice(1)}" in Redis URL "${shown}": the path is a database number`,
    );
  }
  if (!cluster) {
    try {
      new URL(url);
    } catch {
      throw new ReinsError("usage", `invalid Redis URL "${shown}": ${REDIS_USAGE}`);
    }
  }
  return {
    cluster,
    tls: scheme.startsWith("rediss"),
    username: decode(user),
    password: decode(pass),
    nodes: cluster ? nodes : [],
    ...ownParameters(url, shown),
  };
}
