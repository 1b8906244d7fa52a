/** The hook command's main: reads the hook input from stdin, answers it in-process, writes the reply. */
import { opensTurn } from "../guard/hooks/hook-events.js";
import "./jitless.js";
import { readSync } from "node:fs";
import { runHook } from "../guard/hooks/hook-call.js";

/** Whether bytes are one complete JSON value (the hook input, whole). */
function isWholeJson(bytes: Buffer): boolean {
  try {
    JSON.parse(bytes.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads all of stdin, or up to the end of the JSON input when the writer keeps it open. Synchronous reads, because process.stdin's stream machinery costs a few ms to load;
 * the hook's stdin is a blocking pipe (libuv and Rust's std both hand children blocking stdio), but when
 * it is not, the rest is read through process.stdin.
 */
async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EOF") break;
      if (code !== "EAGAIN") throw error;
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      break;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
    // An agent that writes its input and keeps stdin open must not hang the hook: once what came is a
    // whole JSON object, that is the input.
    if (buffer[n - 1] === 0x7d || buffer[n - 1] === 0x0a) {
      const whole = Buffer.concat(chunks);
      if (isWholeJson(whole)) return whole;
    }
  }
  return Buffer.concat(chunks);
}

/** How long a Claude Code turn's start waits for the daemon it started, ms. */
const DAEMON_WAIT_MS = 5_000;

/**
 * `reins hook <agent>` without the CLI framework or the server: the in-process fallback runs once per tool
 * call, so bin/reins.js takes this path straight away and loads only what answering a hook needs. With
 * `startDaemon`, a hook client found no daemon: once the call is answered, the project gets its hook secret
 * if it had none and the user's hook daemon of that name is started, so the next calls go to it. With
 * `unproven`, the client met an answer on that daemon's socket without the daemon key's proof: the tamper
 * record says so, and the daemon is started (it takes the socket back).
 */
export async function hookMain(agent: string, startDaemon?: string, unproven = false): Promise<number> {
  const raw = await readStdin();
  const result = await runHook(agent, raw, process.env, process.cwd());
  if (result.reply !== null) process.stdout.write(`${JSON.stringify(result.reply)}\n`);
  if (result.warning !== "") process.stderr.write(`${result.warning}\n`);
  if (startDaemon !== undefined && unproven) {
    const { recordUnproven } = await import("../guard/daemon/start.js");
    recordUnproven(startDaemon, process.env);
  }
  if (startDaemon !== undefined && result.root !== undefined) {
    // Loaded only here: the common call never pays for what starting a daemon needs.
    const { awaitDaemon, startDaemonFor } = await import("../guard/daemon/start.js");
    // bin/reins.js is the script this process runs.
    if (process.argv[1] !== undefined)
      startDaemonFor(result.root, { bin: process.argv[1], name: startDaemon, env: process.env });
    // Claude Code's tool calls post to the daemon's port (its http hooks): its turn's start waits for it.
    if (agent === "claude" && opensTurn(raw)) await awaitDaemon(startDaemon, process.env, DAEMON_WAIT_MS);
  }
  return 0;
}
