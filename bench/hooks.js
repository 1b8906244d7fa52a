// Hook latency: what each way of installing reins adds to one agent tool call, beside two floors measured
// in the same run: an empty Node process, and a trivial HTTP server's loopback round trip.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REINS_BIN } from "../dist/base/config/package-info.js";
import { startHookDaemon } from "../dist/guard/daemon/hook-daemon.js";
import { socketPath } from "../dist/guard/daemon/paths.js";
import { buildClient } from "../dist/install/native-client.js";
import { openServices } from "../dist/guard/hooks/hook-call.js";
import { apiToken, hookSecret } from "../dist/base/config/hook-secret.js";
import { createServer as createReins } from "../dist/server/server.js";
import { median, quantile } from "./stats.js";

const root = join(import.meta.dirname, "..");
const ms = (ns) => `${(ns / 1e6).toFixed(2)} ms`;

function timeProcess(command, args, input, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(command, args, { input });
    times.push(Number(process.hrtime.bigint() - t0));
    if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  }
  return times;
}

async function timeFetch(url, body, headers, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const response = await fetch(url, {
      method: "POST",
      body: body(i),
      headers: { "content-type": "application/json", ...headers },
    });
    await response.text();
    times.push(Number(process.hrtime.bigint() - t0));
  }
  return times;
}

export async function hooksBench(report) {
  const project = mkdtempSync(join(tmpdir(), "reins-bench-hooks-"));
  writeFileSync(join(project, "reins.config.json"), "{}");
  const input = (i) =>
    JSON.stringify({
      session_id: `bench-${i % 20}`,
      hook_event_name: "PreToolUse",
      tool_name: "Read",
      tool_input: { file_path: `src/f${i}.ts` },
      cwd: project,
    });

  const emptyNode = median(timeProcess(process.execPath, ["-e", ""], "", 15));
  const trivial = createServer((req, res) => req.resume().on("end", () => res.end("{}")));
  await new Promise((r) => trivial.listen(0, "127.0.0.1", r));
  await timeFetch(`http://127.0.0.1:${trivial.address().port}/`, input, {}, 50);
  const loopback = median(await timeFetch(`http://127.0.0.1:${trivial.address().port}/`, input, {}, 400));
  trivial.close();

  const services = await openServices(project, {});
  const secret = hookSecret(project);
  const app = await createReins({ services, secret, token: apiToken(project).value, host: "127.0.0.1" });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const auth = { authorization: `Bearer ${secret}` };
  await timeFetch(`${url}/hooks/claude`, input, auth, 100);
  const http = await timeFetch(`${url}/hooks/claude`, input, auth, 1_000);

  // The command-hook clients (what `reins init` installs for every agent), forwarding to the user's hook daemon
  // over its socket: the daemon runs in this very process, so the clients are spawned asynchronously.
  const runtime = mkdtempSync(join(tmpdir(), "reins-bench-runtime-"));
  const clientEnv = { ...process.env, REINS_RUNTIME_DIR: runtime };
  const started = await startHookDaemon({
    socket: socketPath(clientEnv, "d-bench"),
    bin: REINS_BIN,
    version: "bench",
  });
  const clientTimes = [];
  for (let i = 0; i < 40; i++) {
    const t0 = process.hrtime.bigint();
    const code = await new Promise((resolve) => {
      const child = spawn(join(root, "bin", "reins-hook"), ["claude", "d-bench", process.execPath], {
        cwd: project,
        env: clientEnv,
        stdio: ["pipe", "ignore", "ignore"],
      });
      child.on("close", resolve);
      child.stdin.end(input(i));
    });
    clientTimes.push(Number(process.hrtime.bigint() - t0));
    if (code !== 0) throw new Error(`reins-hook exited ${code}`);
  }
  // Any command hook costs the agent a process spawn; measure a no-op one (/bin/true) the same way.
  const spawnOnce = (command, args, env, text) =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      const child = spawn(command, args, { cwd: project, env, stdio: ["pipe", "ignore", "ignore"] });
      child.on("close", (code) => resolve({ code, ns: Number(process.hrtime.bigint() - t0) }));
      child.stdin.on("error", () => {});
      child.stdin.end(text);
    });
  const noop = [];
  for (let i = 0; i < 200; i++) noop.push((await spawnOnce("/bin/true", [], process.env, input(i))).ns);
  const native = buildClient(project, join(root, "src", "client", "reins-hook.c"));
  const nativeTimes = [];
  for (let i = 0; native !== null && i < 200; i++) {
    const t0 = process.hrtime.bigint();
    const code = await new Promise((resolve) => {
      const child = spawn(native, ["claude", process.execPath, REINS_BIN, "d-bench"], {
        cwd: project,
        env: clientEnv,
        stdio: ["pipe", "ignore", "ignore"],
      });
      child.on("close", resolve);
      child.stdin.end(input(i));
    });
    nativeTimes.push(Number(process.hrtime.bigint() - t0));
    if (code !== 0) throw new Error(`native reins-hook exited ${code}`);
  }
  if (started.kind === "listening") await started.daemon.close("bench over");
  await app.close();
  await services.store.close();

  // The in-process fallback, the command `reins init claude` installs ("<node>" "<bin/reins.js>" hook claude):
  // a Node process per tool call that opens the store itself. Timed interleaved with an empty Node process
  // so both see the same load, after one call that fills the policy and code caches as any first call does.
  const fallback = [join(root, "bin", "reins.js"), "hook", "claude"];
  timeProcess(process.execPath, fallback, input(0), 1);
  const inProcess = [];
  const emptyBeside = [];
  for (let i = 1; i <= 31; i++) {
    emptyBeside.push(...timeProcess(process.execPath, ["-e", ""], "", 1));
    inProcess.push(...timeProcess(process.execPath, fallback, input(i), 1));
  }

  report('hook floor: empty Node process (node -e "")', `p50 ${ms(emptyNode)}`);
  report("hook floor: trivial HTTP server round trip on 127.0.0.1", `p50 ${ms(loopback)}`);
  report(
    "hook: Claude Code http hook to the project's server (SQLite; `reins init claude --http`)",
    `p50 ${ms(median(http))}`,
    {
      p99: ms(quantile(http, 0.99)),
      ratio: `${(median(http) / emptyNode).toFixed(3)}x an empty Node process; ${(median(http) / loopback).toFixed(1)}x the trivial round trip`,
      aim: "< 0.05x an empty Node process",
    },
  );
  const curl = median(timeProcess("sh", ["-c", "true"], "", 20));
  report(
    "hook: command-hook client without a C compiler (bin/reins-hook, curl to the user's hook daemon)",
    `p50 ${ms(median(clientTimes))}`,
    {
      ratio: `${(median(clientTimes) / emptyNode).toFixed(3)}x an empty Node process (a bare \`sh -c true\` takes ${ms(curl)})`,
      aim: "< 0.05x an empty Node process",
    },
  );
  if (native === null) report("hook: native command-hook client", "skipped: no C compiler");
  else {
    report(
      "hook: native command-hook client to the user's hook daemon (.reins/bin/reins-hook; what `reins init` installs for every agent)",
      `p50 ${ms(median(nativeTimes))}`,
      {
        p99: ms(quantile(nativeTimes, 0.99)),
        floor: `a no-op command hook (/bin/true) spawned the same way: p50 ${ms(median(noop))}`,
        adds: `${ms(median(nativeTimes) - median(noop))} over the no-op hook = ${((median(nativeTimes) - median(noop)) / emptyNode).toFixed(3)}x an empty Node process`,
        aim: "< 0.05x an empty Node process",
      },
    );
  }
  report(
    "hook: in-process (node bin/reins.js hook claude; `reins init --in-process`, and every client's fallback)",
    `p50 ${ms(median(inProcess))}`,
    {
      p90: ms(quantile(inProcess, 0.9)),
      floor: `an empty Node process timed between its runs: p50 ${ms(median(emptyBeside))}`,
      ratio: `${(median(inProcess) / median(emptyBeside)).toFixed(2)}x an empty Node process`,
      aim: "<= 1.5x an empty Node process",
    },
  );
}
