// A Redis Cluster for the benchmarks: 3 masters (no replicas) on free ports of 127.0.0.1, joined by
// `redis-cli --cluster create`, without persistence. test/support/redis-cluster.ts is the tests' fuller one.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the cluster and waits until every node serves all 16384 slots; null when redis-cli is missing. */
export async function startCluster() {
  if (spawnSync("redis-server", ["--version"]).error || spawnSync("redis-cli", ["--version"]).error)
    return null;
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-cluster-"));
  const ports = new Set();
  while (ports.size < 6) ports.add(await freePort());
  const [p1, b1, p2, b2, p3, b3] = [...ports];
  const nodes = [
    [p1, b1],
    [p2, b2],
    [p3, b3],
  ].map(([port, bus]) =>
    spawn(
      "redis-server",
      [
        ...["--port", String(port), "--cluster-port", String(bus), "--bind", "127.0.0.1"],
        ...["--cluster-enabled", "yes", "--cluster-config-file", join(dir, `nodes-${port}.conf`)],
        ...["--save", "", "--appendonly", "no", "--dir", dir],
      ],
      { stdio: "ignore" },
    ),
  );
  const masters = [p1, p2, p3];
  const clients = masters.map((port) => new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 0 }));
  for (const c of clients) c.on("error", () => {});
  const stop = async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(
      nodes.map((n) => new Promise((resolve) => (n.once("exit", resolve), n.kill("SIGTERM")))),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  for (
    let i = 0;
    i < 200 && !(await Promise.all(clients.map((c) => c.ping().catch(() => null)))).every(Boolean);
    i++
  )
    await sleep(25);
  const create = spawnSync(
    "redis-cli",
    [
      "--cluster",
      "create",
      ...masters.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ],
    { encoding: "utf8", timeout: 30_000 },
  );
  if (create.status !== 0) {
    await stop();
    throw new Error(`redis-cli --cluster create failed: ${create.stderr || create.stdout}`);
  }
  const ok = async () =>
    (await Promise.all(clients.map((c) => c.call("CLUSTER", "INFO")))).every(
      (info) => /cluster_state:ok/.test(info) && /cluster_slots_assigned:16384/.test(info),
    );
  for (let i = 0; i < 400 && !(await ok()); i++) await sleep(50);
  /** A plain connection to the master serving `key`'s slot. */
  const nodeFor = async (key) => {
    const slot = Number(await clients[0].call("CLUSTER", "KEYSLOT", key));
    const ranges = await clients[0].call("CLUSTER", "SLOTS");
    const owner = ranges.find(([from, to]) => from <= slot && slot <= to);
    return clients[masters.indexOf(Number(owner[2][1]))];
  };
  return { url: `redis+cluster://${masters.map((p) => `127.0.0.1:${p}`).join(",")}`, nodeFor, stop };
}
