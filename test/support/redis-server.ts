import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { connect } from "node:net";

/**
 * A real `redis-server` for the Redis tests: started on a free port of 127.0.0.1 without persistence,
 * stopped (and restarted on the same port) at will. With `REINS_TEST_REDIS_URL` set, that server is
 * used instead and nothing is started (it cannot be stopped, so outage tests skip).
 */

const BINARY = process.env.REINS_REDIS_SERVER ?? "redis-server";

/** The URL of an external test server, if one is given. */
export const externalRedisUrl: string | undefined = process.env.REINS_TEST_REDIS_URL || undefined;

/** Whether `redis-server` can be run here. */
export const redisServerInstalled: boolean =
  spawnSync(BINARY, ["--version"], { stdio: "ignore" }).error === undefined;

/**
 * Why the Redis tests cannot run, or null when they can. Missing Redis fails the run on CI
 * (`CI=true`): there the tests must run, not be skipped quietly.
 */
export function redisUnavailableReason(): string | null {
  if (externalRedisUrl !== undefined || redisServerInstalled) return null;
  const reason = `${BINARY} is not installed (install redis-server or set REINS_TEST_REDIS_URL)`;
  if (process.env.CI === "true") throw new Error(`Redis tests cannot run on CI: ${reason}`);
  return reason;
}

import { freePort } from "./free-port.js";

export { freePort };

/**
 * Whether a Redis server on `port` answers PING: +PONG, or with `orNoAuth` a refusal for want of a password.
 * A server still loading its file answers -LOADING, which is not an answer.
 */
export function pings(port: number, timeoutMs = 500, orNoAuth = true): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let answer = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (data) => {
      answer += data.toString();
      if (answer.includes("\r\n"))
        done(answer.startsWith("+PONG") || (orNoAuth && answer.startsWith("-NOAUTH")));
    });
  });
}

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (or the external URL). */
  readonly url: string;
  /** Whether this harness started the server (and so can stop and restart it). */
  readonly managed: boolean;
  /** Stops the server (SIGTERM) and waits until it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port; its data is gone (no persistence). */
  restart(): Promise<void>;
}

class ManagedServer implements RedisServer {
  readonly managed = true;
  readonly url: string;
  #child: ChildProcess | null = null;

  constructor(
    readonly port: number,
    readonly args: readonly string[],
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      BINARY,
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...this.args],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#child = child;
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    let exited = false;
    child.once("exit", () => (exited = true));
    const deadline = Date.now() + 10_000;
    while (!(await pings(this.port))) {
      if (exited) throw new Error(`redis-server on port ${this.port} exited at start:\n${output}`);
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`redis-server on port ${this.port} did not answer PING within 10 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  }

  restart(): Promise<void> {
    return this.start();
  }
}

/** The test server: the external one when `REINS_TEST_REDIS_URL` is set, else a fresh managed one. */
export function startRedis(): Promise<RedisServer> {
  const url = externalRedisUrl;
  if (url === undefined) return startManagedRedis();
  return Promise.resolve({
    port: Number(new URL(url).port || 6379),
    url,
    managed: false,
    stop: () => Promise.reject(new Error("an external test Redis cannot be stopped")),
    restart: () => Promise.reject(new Error("an external test Redis cannot be restarted")),
  });
}

/** Starts a fresh `redis-server` of this test's own, with extra `args` such as `["--requirepass", "pw"]`. */
export async function startManagedRedis(args: readonly string[] = []): Promise<RedisServer> {
  for (let tries = 1; ; tries++) {
    const server = new ManagedServer(await freePort(), args);
    try {
      await server.start();
      return server;
    } catch (error) {
      // Another process may have taken the port between freePort and the start: try another.
      if (tries >= 3) throw error;
    }
  }
}
