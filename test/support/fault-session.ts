import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { cleanEnv, reinsBin } from "./processes.js";

/**
 * A simulated Claude Code session for fault tests: it sends hook calls the way Claude Code does (http hooks
 * to the daemon, command hooks as processes), writes one assistant line with token usage to its transcript
 * per tool call, and records every answer with how long it took.
 */

/** Claude Code's timeout for the http hooks `reins init claude` installs (their `timeout: 10`). */
export const HTTP_HOOK_TIMEOUT_MS = 10_000;
/** Claude Code's timeout for reins' command hooks (`timeout: 30`). */
export const COMMAND_HOOK_TIMEOUT_MS = 30_000;

/** What an answer said, as Claude Code would read it. */
export type AnswerKind =
  | "allow" // an empty answer
  | "deny" // PreToolUse permissionDecision deny
  | "ask"
  | "context" // advice only (additionalContext, systemMessage)
  | "block" // decision: block (PostToolUse, Stop)
  | "failure" // no answer: refused connection, a reset, a non-2xx status, a crashed command
  | "timeout"; // no answer within the hook's timeout

export interface CallRecord {
  session: string;
  hook: string;
  via: "http" | "command";
  /** The tool call's id (PreToolUse, PostToolUse). */
  callId?: string;
  startedAt: number;
  endedAt: number;
  ms: number;
  kind: AnswerKind;
  reply: unknown;
  /** Why there was no answer, or what a command printed on stderr. */
  detail: string;
}

/** Reads an answer as Claude Code would. */
export function kindOf(reply: unknown): AnswerKind {
  if (reply === null || typeof reply !== "object") return "allow";
  const r = reply as {
    decision?: string;
    systemMessage?: string;
    hookSpecificOutput?: { permissionDecision?: string; additionalContext?: string };
  };
  const decision = r.hookSpecificOutput?.permissionDecision;
  if (decision === "deny") return "deny";
  if (decision === "ask") return "ask";
  if (r.decision === "block") return "block";
  if (r.hookSpecificOutput?.additionalContext !== undefined || r.systemMessage !== undefined)
    return "context";
  return Object.keys(r).length === 0 ? "allow" : "context";
}

export interface SessionOptions {
  id: string;
  project: string;
  /** Where the session's transcript is written (outside `.reins/`, like ~/.claude/projects). */
  transcriptDir: string;
  /** The project's server's port: http hooks go to http://127.0.0.1:<port>/hooks/claude. */
  port: number;
  secret: string;
  /** Extra environment for command hooks, whose environment is otherwise `cleanEnv`'s (PATH, HOME...). */
  env?: Record<string, string>;
}

/** One usage line as written to the transcript. */
export interface UsageLine {
  messageId: string;
  requestId: string;
  /** The tool call the line asked for. */
  callId: string;
  input: number;
  output: number;
}

export class SimulatedSession {
  readonly id: string;
  readonly transcriptPath: string;
  readonly calls: CallRecord[] = [];
  readonly usage: UsageLine[] = [];
  #n = 0;

  constructor(readonly options: SessionOptions) {
    this.id = options.id;
    this.transcriptPath = join(options.transcriptDir, `${options.id}.jsonl`);
    writeFileSync(this.transcriptPath, "");
  }

  /** Tokens written to the transcript: each message once. */
  get tokensWritten(): number {
    return this.usage.reduce((sum, u) => sum + u.input + u.output, 0);
  }

  #input(hook: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      session_id: this.id,
      transcript_path: this.transcriptPath,
      cwd: this.options.project,
      hook_event_name: hook,
      permission_mode: "default",
      prompt_id: `${this.id}-prompt`,
      ...extra,
    };
  }

  /** Posts one http hook call to the daemon with Claude Code's timeout for it. */
  async http(hook: string, extra: Record<string, unknown> = {}, callId?: string): Promise<CallRecord> {
    const startedAt = Date.now();
    let kind: AnswerKind;
    let reply: unknown = null;
    let detail = "";
    try {
      const response = await fetch(`http://127.0.0.1:${this.options.port}/hooks/claude`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${this.options.secret}` },
        body: JSON.stringify(this.#input(hook, extra)),
        signal: AbortSignal.timeout(HTTP_HOOK_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.status !== 200) {
        kind = "failure";
        detail = `HTTP ${response.status}: ${text.slice(0, 200)}`;
      } else {
        reply = JSON.parse(text) as unknown;
        kind = kindOf(reply);
      }
    } catch (error) {
      const e = error as Error & { cause?: { code?: string } };
      kind = e.name === "TimeoutError" ? "timeout" : "failure";
      detail = e.cause?.code ?? e.message;
    }
    return this.#record({ hook, via: "http", startedAt, kind, reply, detail, callId });
  }

  /**
   * Runs a command hook (`reins hook claude ...args`) with the input on stdin and Claude Code's timeout. Its
   * environment is a clean one: a developer's REINS_STORE, REINS_SERVER_URL or CLAUDE_PROJECT_DIR would send
   * its events elsewhere.
   */
  command(hook: string, args: string[], extra: Record<string, unknown> = {}): Promise<CallRecord> {
    const startedAt = Date.now();
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [reinsBin, "hook", "claude", ...args], {
        cwd: this.options.project,
        env: cleanEnv(homedir(), { ...this.options.env, CLAUDE_PROJECT_DIR: this.options.project }),
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGKILL");
      }, COMMAND_HOOK_TIMEOUT_MS);
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.stdin.on("error", () => undefined);
      child.stdin.end(JSON.stringify(this.#input(hook, extra)));
      child.on("close", (code) => {
        clearTimeout(timer);
        let kind: AnswerKind;
        let reply: unknown = null;
        if (timedOut) kind = "timeout";
        else if (code !== 0) kind = "failure";
        else {
          try {
            reply = stdout.trim() === "" ? null : (JSON.parse(stdout) as unknown);
            kind = kindOf(reply);
          } catch {
            kind = "failure";
          }
        }
        resolve(this.#record({ hook, via: "command", startedAt, kind, reply, detail: stderr.trim() }));
      });
    });
  }

  #record(r: Omit<CallRecord, "session" | "endedAt" | "ms" | "callId"> & { callId?: string | undefined }) {
    const endedAt = Date.now();
    const { callId, ...rest } = r;
    const record: CallRecord = {
      session: this.id,
      ...rest,
      ...(callId !== undefined ? { callId } : {}),
      endedAt,
      ms: endedAt - r.startedAt,
    };
    this.calls.push(record);
    return record;
  }

  /** Writes the assistant line that asks for the next tool call, with its usage, as Claude Code does. */
  #assistantLine(n: number, callId: string, command: string): void {
    const messageId = `msg_${this.id}_${n}`;
    // Varied but deterministic counts, so a lost or doubled line shows in the total.
    const input = 100 + ((n * 37) % 91);
    const output = 10 + ((n * 13) % 17);
    const line = {
      parentUuid: null,
      isSidechain: false,
      type: "assistant",
      message: {
        id: messageId,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "tool_use", id: callId, name: "Bash", input: { command } }],
        stop_reason: "tool_use",
        usage: {
          input_tokens: input,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: output,
        },
      },
      requestId: `req_${this.id}_${n}`,
      uuid: `${this.id}-${n}`,
      timestamp: new Date().toISOString(),
      sessionId: this.id,
      cwd: this.options.project,
    };
    // One write of a whole line: a reader never sees half of it as a line.
    appendFileSync(this.transcriptPath, `${JSON.stringify(line)}\n`);
    this.usage.push({ messageId, requestId: line.requestId, callId, input, output });
  }

  /**
   * One tool call: the assistant line, PreToolUse, then PostToolUse with the command's output. Returns the
   * two records; a hook that got no answer does not stop the tool (Claude Code goes on).
   */
  async toolCall(via: (hook: string, extra: Record<string, unknown>, callId: string) => Promise<CallRecord>) {
    const n = ++this.#n;
    const callId = `toolu_${this.id}_${n}`;
    const command = `echo ${this.id} step ${n}`;
    this.#assistantLine(n, callId, command);
    const pre = await via(
      "PreToolUse",
      { tool_name: "Bash", tool_input: { command }, tool_use_id: callId },
      callId,
    );
    const post = await via(
      "PostToolUse",
      {
        tool_name: "Bash",
        tool_input: { command },
        tool_use_id: callId,
        tool_response: { stdout: `${this.id} step ${n}\n`, stderr: "", interrupted: false, isImage: false },
      },
      callId,
    );
    return { pre, post };
  }

  /** The number of tool calls made so far. */
  get toolCalls(): number {
    return this.#n;
  }
}

/** The p-th percentile (0..100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}
