/** A redis-server for fault tests, killed outright and started again. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, pings } from "./redis-server.js";

/** The server binary: REINS_REDIS_SERVER, as for the other Redis tests, else `redis-server` on the PATH. */
const BINARY = process.env.REINS_REDIS_SERVER ?? "redis-server";

/**
 * A `redis-server` for fault tests that is killed outright (SIGKILL, no shutdown save) and started again on
 * the same port and data folder. With `durable` it runs with an append-only file fsynced on every write
 * (`--appendonly yes --appendfsync always`), so whatever Redis acknowledged survives the kill.
 */
export interface FaultRedis {
  readonly port: number;
  readonly url: string;
  /** How many times it was killed. */
  readonly kills: number;
  /** SIGKILLs the server and waits until it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and folder, and waits until it answers PING (its file loaded). */
  start(): Promise<void>;
  /** Kills it and removes its data folder, for cleanup. */
  stop(): Promise<void>;
}

/** Waits for `condition` to hold, polling every `everyMs`; throws with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

class KillableRedis implements FaultRedis {
  readonly url: string;
  kills = 0;
  #child: ChildProcess | null = null;
  #output = "";

  constructor(
    readonly port: number,
    readonly dir: string,
    readonly durable: boolean,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const persistence = this.durable
      ? ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
      : ["--appendonly", "no", "--save", ""];
    const child = spawn(
      BINARY,
      ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, ...persistence],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#child = child;
    child.stdout?.on("data", (d: Buffer) => (this.#output = (this.#output + d.toString()).slice(-4_000)));
    child.stderr?.on("data", (d: Buffer) => (this.#output = (this.#output + d.toString()).slice(-4_000)));
    let exited = false;
    let failed: Error | null = null;
    child.once("exit", () => (exited = true));
    // Not started at all (no such binary): without a listener the error would crash the test process.
    child.once("error", (error) => (failed = error));
    await waitFor(`${BINARY} on port ${this.port} to answer PING`, async () => {
      if (failed !== null) throw new Error(`${BINARY} could not be started: ${failed.message}`);
      if (exited) throw new Error(`${BINARY} on port ${this.port} exited at start:\n${this.#output}`);
      return pings(this.port, 500, false); // a server still loading its file answers -LOADING
    });
  }

  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
    this.kills += 1;
  }

  async stop(): Promise<void> {
    try {
      await this.kill();
    } catch {
      // already gone
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts a killable Redis on a free port, with its own data folder. */
export async function startFaultRedis(options: { durable?: boolean } = {}): Promise<FaultRedis> {
  for (let tries = 1; ; tries++) {
    const server = new KillableRedis(
      await freePort(),
      mkdtempSync(join(tmpdir(), "reins-fault-redis-")),
      options.durable ?? true,
    );
    try {
      await server.start();
      return server;
    } catch (error) {
      await server.stop();
      // Another process may have taken the port between freePort and the start: try another.
      if (tries >= 3) throw error;
    }
  }
}
