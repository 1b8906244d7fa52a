import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, pings } from "./redis-server.js";

/**
 * A real Redis Cluster for the cluster tests: 3 masters and 3 replicas on free ports of 127.0.0.1, each
 * node in a temp dir of its own, without persistence, joined by `redis-cli --cluster create`. Masters can
 * be SIGKILLed (a replica takes over) and slots moved by hand, so clients meet MOVED, ASK and failovers.
 */

const SERVER = process.env.REINS_REDIS_SERVER ?? "redis-server";
const CLI = process.env.REINS_REDIS_CLI ?? "redis-cli";
const SLOTS = 16_384;
/** How long a node may miss pings before it is suspected failed, ms: small, so a failover takes seconds. */
const NODE_TIMEOUT_MS = 2_000;
/** How long the cluster may take to come up, or to settle after a failover or a slot move, ms. */
const SETTLE_MS = 20_000;

const installed = (binary: string) =>
  spawnSync(binary, ["--version"], { stdio: "ignore" }).error === undefined;

/**
 * Why the cluster tests cannot run, or null when they can. Missing binaries fail the run on CI
 * (`CI=true`), as for the single-server tests: there the tests must run, not be skipped quietly.
 */
export function clusterUnavailableReason(): string | null {
  const missing = [SERVER, CLI].filter((binary) => !installed(binary));
  if (missing.length === 0) return null;
  const reason = `${missing.join(" and ")} not installed (install redis-server and redis-tools)`;
  if (process.env.CI === "true") throw new Error(`Redis Cluster tests cannot run on CI: ${reason}`);
  return reason;
}

/** One node as the cluster sees it (a line of CLUSTER NODES). */
export interface ClusterNodeInfo {
  id: string;
  port: number;
  role: "master" | "replica";
  /** Flagged `fail` or `fail?` by the node asked. */
  failing: boolean;
  /** For a replica, its master's id. */
  masterId: string | null;
  /** The slots it serves, as [first, last] ranges (not those being migrated in or out). */
  slots: [number, number][];
}

/** A slot being moved between masters: between `start` and `finish` clients meet ASK, after it MOVED. */
export interface SlotMigration {
  readonly slot: number;
  readonly from: number;
  readonly to: number;
  /** Moves up to `limit` keys of the slot (all when omitted) to the target; resolves with how many moved. */
  moveKeys(limit?: number): Promise<number>;
  /** Moves the keys left, hands the slot to the target on every master, and waits until all nodes agree. */
  finish(): Promise<void>;
}

export interface RedisCluster {
  /** `redis+cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>`: the first masters, as seeds. */
  readonly url: string;
  /** The seed nodes, for clients such as ioredis's `Cluster`. */
  readonly seeds: readonly { host: string; port: number }[];
  /** The ports of all six nodes, dead ones included. */
  readonly ports: readonly number[];
  /** The cluster's nodes as a live node sees them. */
  nodes(): Promise<ClusterNodeInfo[]>;
  /** The hash slot of `key` (its hash tag's, if it has one). */
  slotOf(key: string): Promise<number>;
  /** The port of the master serving `key`'s slot. */
  masterFor(key: string): Promise<number>;
  /** Ports of the live masters that serve slots. */
  masters(): Promise<number[]>;
  /**
   * SIGKILLs the master on `port` and waits until one of its replicas has taken over its slots and every
   * live node says `cluster_state:ok`; resolves with the new master's port.
   */
  killMaster(port: number): Promise<number>;
  /** Waits until every live replica has finished syncing with its master (done by `startCluster`). */
  replicasInSync(): Promise<void>;
  /** Marks `slot` MIGRATING on its master and IMPORTING on the master at `to`; moves no key yet. */
  startMigration(slot: number, to: number): Promise<SlotMigration>;
  /** Moves `slot` with its keys to the master at `to`, at once. */
  migrateSlot(slot: number, to: number): Promise<void>;
  /** Kills every node and removes their folders. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it returns a value other than undefined, or fails naming `what`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = SETTLE_MS): Promise<T> {
  const deadline = Date.now() + ms;
  let last: string | undefined = undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
      last = undefined;
    } catch (error) {
      last = error instanceof Error ? error.message : JSON.stringify(error);
    }
    if (Date.now() > deadline) {
      const why = last === undefined ? "" : ` (last error: ${last})`;
      throw new Error(`Redis Cluster: ${what} did not happen within ${ms} ms${why}`);
    }
    await sleep(50);
  }
}

/** Parses CLUSTER NODES. */
function parseNodes(text: string): ClusterNodeInfo[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [id = "", address = "", flags = "", master = "-", , , , , ...slots] = line.split(" ");
      const flagList = flags.split(",");
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)?.[1] ?? 0),
        role: flagList.includes("master") ? "master" : "replica",
        failing: flagList.includes("fail") || flagList.includes("fail?"),
        masterId: master === "-" ? null : master,
        slots: slots
          .filter((s) => !s.startsWith("["))
          .map((s) => {
            const [first = "", last = first] = s.split("-");
            return [Number(first), Number(last)] as [number, number];
          }),
      };
    });
}

/** One `redis-server` in cluster mode, run under a shell that SIGKILLs it when our end of its stdin closes. */
class ClusterNode {
  readonly dir: string;
  #wrapper: ChildProcess | null = null;
  #output = "";
  #admin: Redis | null = null;
  /** The redis-server's own pid (the wrapper's child). */
  pid = 0;
  dead = false;

  constructor(
    readonly port: number,
    readonly busPort: number,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "reins-cluster-"));
  }

  async start(): Promise<void> {
    const args = [
      "--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir,
      "--cluster-enabled", "yes", "--cluster-config-file", join(this.dir, "nodes.conf"),
      "--cluster-port", String(this.busPort), "--cluster-node-timeout", String(NODE_TIMEOUT_MS),
      // A replica may always take over, however long since it heard from its master.
      "--cluster-replica-validity-factor", "0",
      // A replica's first sync starts at once, not after the 5 s Redis waits by default for more replicas.
      "--repl-diskless-sync-delay", "0",
      "--save", "", "--appendonly", "no", "--logfile", "",
    ]; // prettier-ignore
    // If this test process dies without stopping the node (even by SIGKILL), the pipe to the shell's stdin
    // closes, `read` returns and the shell kills the server and removes its folder: no node outlives its test.
    const script =
      '"$@" & pid=$!; echo "pid $pid"; read _line; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$REINS_NODE_DIR"';
    const wrapper = spawn("sh", ["-c", script, "sh", SERVER, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, REINS_NODE_DIR: this.dir },
    });
    this.#wrapper = wrapper;
    live.add(this);
    const keep = (d: Buffer) => (this.#output = (this.#output + d.toString()).slice(-4_000));
    wrapper.stdout?.on("data", keep);
    wrapper.stderr?.on("data", keep);
    wrapper.stdin?.on("error", () => undefined);
    await until(
      `redis-server on port ${this.port} answering PING`,
      async () => {
        if (wrapper.exitCode !== null) throw new Error(`it exited at start:\n${this.#output}`);
        const pid = /pid (\d+)/.exec(this.#output)?.[1];
        if (pid !== undefined) this.pid = Number(pid);
        return this.pid !== 0 && (await pings(this.port, 500, false)) ? true : undefined;
      },
      10_000,
    );
  }

  /** A connection for cluster admin commands to this node only. */
  admin(): Redis {
    if (this.#admin === null) {
      this.#admin = new Redis({
        host: "127.0.0.1",
        port: this.port,
        lazyConnect: false,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: true,
        connectTimeout: 2_000,
        commandTimeout: 5_000,
        retryStrategy: () => (this.dead ? null : 100),
      });
      this.#admin.on("error", () => undefined);
    }
    return this.#admin;
  }

  async command(name: string, ...args: (string | number)[]): Promise<unknown> {
    if (this.dead) throw new Error(`node ${this.port} was killed`);
    return this.admin().call(name, ...args);
  }

  /** SIGKILLs the server (the shell stays until `stop`) and waits until its port is closed. */
  async kill(): Promise<void> {
    this.dead = true;
    this.#admin?.disconnect();
    if (this.pid !== 0) process.kill(this.pid, "SIGKILL");
    await until(
      `node ${this.port} gone after SIGKILL`,
      async () => ((await pings(this.port, 200, false)) ? undefined : true),
      5_000,
    );
  }

  /** Ends the shell's stdin so it SIGKILLs the server, waits until the shell exits, removes the folder. */
  async stop(): Promise<void> {
    this.dead = true;
    this.#admin?.disconnect();
    const wrapper = this.#wrapper;
    this.#wrapper = null;
    if (wrapper !== null && wrapper.exitCode === null && wrapper.signalCode === null) {
      const exited = new Promise<void>((resolve) => wrapper.once("exit", () => resolve()));
      wrapper.stdin?.end();
      const timer = setTimeout(() => this.killNow(wrapper), 3_000);
      await exited;
      clearTimeout(timer);
    }
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Kills the server and its shell at once, synchronously (for process exit). */
  killNow(wrapper = this.#wrapper): void {
    for (const pid of [this.pid, wrapper?.pid ?? 0]) {
      try {
        if (pid !== 0) process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
}

/** Nodes started and not yet stopped, killed if the test process exits first. */
const live = new Set<ClusterNode>();
process.once("exit", () => {
  for (const node of live) {
    node.killNow();
    rmSync(node.dir, { recursive: true, force: true });
  }
});

/** Runs redis-cli with `args`; resolves with what it printed, rejects with it when it fails. */
function cli(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${CLI} ${args.join(" ")} failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

class Cluster implements RedisCluster {
  readonly url: string;
  readonly seeds: readonly { host: string; port: number }[];
  readonly ports: readonly number[];

  constructor(readonly all: readonly ClusterNode[]) {
    this.ports = all.map((n) => n.port);
    this.seeds = this.ports.slice(0, 3).map((port) => ({ host: "127.0.0.1", port }));
    this.url = `redis+cluster://${this.seeds.map((s) => `${s.host}:${s.port}`).join(",")}`;
  }

  #node(port: number): ClusterNode {
    const node = this.all.find((n) => n.port === port);
    if (node === undefined) throw new Error(`no node of this cluster on port ${port}`);
    return node;
  }

  get #alive(): ClusterNode[] {
    return this.all.filter((n) => !n.dead);
  }

  async #nodesSeenBy(node: ClusterNode): Promise<ClusterNodeInfo[]> {
    return parseNodes(String(await node.command("CLUSTER", "NODES")));
  }

  async nodes(): Promise<ClusterNodeInfo[]> {
    const [first] = this.#alive;
    if (first === undefined) throw new Error("every node of the cluster is dead");
    return this.#nodesSeenBy(first);
  }

  async slotOf(key: string): Promise<number> {
    const [first] = this.#alive;
    if (first === undefined) throw new Error("every node of the cluster is dead");
    return Number(await first.command("CLUSTER", "KEYSLOT", key));
  }

  async #ownerOf(slot: number): Promise<ClusterNodeInfo> {
    const owner = (await this.nodes()).find(
      (n) => n.role === "master" && n.slots.some(([a, b]) => a <= slot && slot <= b),
    );
    if (owner === undefined) throw new Error(`no master serves slot ${slot}`);
    return owner;
  }

  async masterFor(key: string): Promise<number> {
    return (await this.#ownerOf(await this.slotOf(key))).port;
  }

  async masters(): Promise<number[]> {
    return (await this.nodes())
      .filter((n) => n.role === "master" && !n.failing && n.slots.length > 0)
      .map((n) => n.port)
      .sort((a, b) => a - b);
  }

  /**
   * Waits until every live node says `cluster_state:ok` with all slots served, and sees every slot served
   * by a live master (`check` may ask for more, such as who serves a slot).
   */
  async settled(what: string, check: (views: ClusterNodeInfo[][]) => boolean = () => true): Promise<void> {
    await until(what, async () => {
      const alive = this.#alive;
      const views: ClusterNodeInfo[][] = [];
      for (const node of alive) {
        const info = String(await node.command("CLUSTER", "INFO"));
        if (!info.includes("cluster_state:ok") || !info.includes(`cluster_slots_ok:${SLOTS}`))
          return undefined;
        const view = await this.#nodesSeenBy(node);
        const served = view
          .filter((n) => n.role === "master" && n.slots.length > 0)
          .every((n) => !n.failing && alive.some((a) => a.port === n.port));
        if (!served || view.some((n) => alive.some((a) => a.port === n.port) && n.failing)) return undefined;
        views.push(view);
      }
      return check(views) ? true : undefined;
    });
  }

  /** Waits until every live replica has its master's data (`master_link_status:up`, first sync done). */
  async replicasInSync(): Promise<void> {
    await until("every replica in sync with its master", async () => {
      for (const node of this.#alive) {
        const info = String(await node.command("INFO", "replication"));
        if (info.includes("role:slave") && !info.includes("master_link_status:up")) return undefined;
        if (info.includes("master_sync_in_progress:1")) return undefined;
      }
      return true;
    });
  }

  async killMaster(port: number): Promise<number> {
    const node = this.#node(port);
    const before = await this.#nodesSeenBy(node);
    const self = before.find((n) => n.port === port);
    if (self?.role !== "master" || self.slots.length === 0)
      throw new Error(`node ${port} is not a master with slots`);
    const replicas = before.filter((n) => n.masterId === self.id && !n.failing).map((n) => n.port);
    if (replicas.length === 0) throw new Error(`master ${port} has no live replica to take over`);
    const [first] = self.slots;
    await node.kill();
    let promoted = 0;
    await this.settled(`a replica of ${port} taking over its slots`, (views) =>
      views.every((view) => {
        const owner = view.find(
          (n) =>
            n.role === "master" &&
            n.slots.some(([a, b]) => first !== undefined && a <= first[0] && first[0] <= b),
        );
        promoted = owner?.port ?? 0;
        return owner !== undefined && replicas.includes(owner.port);
      }),
    );
    return promoted;
  }

  async startMigration(slot: number, to: number): Promise<SlotMigration> {
    const owner = await this.#ownerOf(slot);
    const from = this.#node(owner.port);
    const target = this.#node(to);
    if (from === target) throw new Error(`slot ${slot} is already on ${to}`);
    const targetId = String(await target.command("CLUSTER", "MYID"));
    // The order Redis documents: the target imports before the source migrates, so no ASK goes nowhere.
    await target.command("CLUSTER", "SETSLOT", slot, "IMPORTING", owner.id);
    await from.command("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId);
    const moveKeys = async (limit = Number.POSITIVE_INFINITY) => {
      let moved = 0;
      while (moved < limit) {
        const batch = Math.min(100, limit - moved);
        const keys = (await from.command("CLUSTER", "GETKEYSINSLOT", slot, batch)) as string[];
        if (keys.length === 0) break;
        await from.command("MIGRATE", "127.0.0.1", to, "", 0, 5_000, "KEYS", ...keys);
        moved += keys.length;
      }
      return moved;
    };
    const finish = async () => {
      await moveKeys();
      // The target first, then the source, then the other masters, as Redis documents.
      const others = this.#alive.filter((n) => n !== target && n !== from);
      for (const node of [target, from]) await node.command("CLUSTER", "SETSLOT", slot, "NODE", targetId);
      for (const node of others) {
        const self = (await this.#nodesSeenBy(node)).find((n) => n.port === node.port);
        if (self?.role === "master") await node.command("CLUSTER", "SETSLOT", slot, "NODE", targetId);
      }
      await this.settled(`slot ${slot} served by ${to} in every node's view`, (views) =>
        views.every((view) =>
          view.some((n) => n.port === to && n.slots.some(([a, b]) => a <= slot && slot <= b)),
        ),
      );
    };
    return { slot, from: from.port, to, moveKeys, finish };
  }

  async migrateSlot(slot: number, to: number): Promise<void> {
    await (await this.startMigration(slot, to)).finish();
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((n) => n.stop()));
  }
}

/** Starts six nodes on free ports (a port and its bus port each), trying other ports if one was taken. */
async function startNodes(): Promise<ClusterNode[]> {
  const nodes: ClusterNode[] = [];
  try {
    const ports = new Set<number>();
    // freePort may give a port twice (it is free again once asked): each node needs two of its own.
    while (ports.size < 12) ports.add(await freePort());
    const free = [...ports];
    for (let i = 0; i < 6; i++) nodes.push(new ClusterNode(free[2 * i] ?? 0, free[2 * i + 1] ?? 0));
    await Promise.all(nodes.map((n) => n.start()));
    return nodes;
  } catch (error) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw error;
  }
}

/**
 * Starts a fresh cluster of 3 masters and 3 replicas and waits until every node says `cluster_state:ok`
 * with all 16384 slots served. Stop it with `stop()`; its nodes are killed anyway when the process exits.
 */
export async function startCluster(): Promise<RedisCluster> {
  let nodes: ClusterNode[] | null = null;
  for (let tries = 1; nodes === null; tries++) {
    try {
      nodes = await startNodes();
    } catch (error) {
      // Another process may have taken a port between freePort and the start: try others.
      if (tries >= 3) throw error;
    }
  }
  const cluster = new Cluster(nodes);
  try {
    await cli(
      [
        "--cluster",
        "create",
        ...cluster.ports.map((p) => `127.0.0.1:${p}`),
        "--cluster-replicas",
        "1",
        "--cluster-yes",
      ],
      30_000,
    );
    await cluster.settled("the new cluster to come up", (views) =>
      views.every((view) => view.length === 6 && view.filter((n) => n.role === "replica").length === 3),
    );
    await cluster.replicasInSync();
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
