/** What every agent adapter shares: hashes, input shapes, what a call touches, checks, prices, replies. */
import { createHash } from "node:crypto";
import type { Answer } from "../core/batch.js";
import { oneLineText } from "../core/one-line.js";
import type { EventInput, ReinsEvent, ToolTouch } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import { checkOf, checkPatterns, checkResult } from "./checks.js";
import { commandShape, outputShape } from "./shapes.js";
import { pipelineOfLast, splitShell, type ShellCommand } from "./shell.js";
import { shellEffects } from "./shell-writes.js";
import { failureFingerprint } from "./test-summary.js";

/**
 * What every agent adapter shares: stable hashes of tool input and output, the "shape" of an input with
 * its noise removed, what a tool call reads, writes and runs, which commands are checks, and prices.
 */

/**
 * The schema of a hook input's `session_id`, the same for every agent: it becomes the scope of the call's
 * events. A function, so that it is built only with the schema of the one agent a hook process parses.
 */
export const sessionIdSchema = () => oneLineText(256);

/** How deep `canonical` follows nested values; deeper ones are one marker (hostile input nests thousands deep). */
const MAX_DEPTH = 128;

/**
 * JSON with object keys sorted, so equal values always give equal text. Values nested deeper than
 * MAX_DEPTH are written as a marker instead: the text stays deterministic, and no input can exhaust the
 * stack (which would fail the hook open).
 */
export function canonical(value: unknown, depth = 0): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (depth >= MAX_DEPTH) return '"\u2026nested too deep"';
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, depth + 1)).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, depth + 1)}`).join(",")}}`;
}

/** A short stable hash (SHA-256, 16 hex digits) of any JSON value. */
export function hashOf(value: unknown): string {
  return createHash("sha256")
    .update(typeof value === "string" ? value : canonical(value))
    .digest("hex")
    .slice(0, 16);
}

const NOISE: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>"],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b/g, "<time>"],
  [/(\/tmp|\/var\/folders|\/private\/var)\/[^\s"']+/g, "<tmp>"],
  [/\b[0-9a-f]{8,}\b/gi, "<hex>"],
  [/\d+/g, "<n>"],
];

/** A value's canonical text with noise (uuids, timestamps, temp paths, hex ids, numbers) replaced, hashed. */
function shapeOf(canonicalText: string): string {
  let text = canonicalText.slice(0, 20_000);
  for (const [pattern, mark] of NOISE) text = text.replace(pattern, mark);
  return hashOf(text);
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Files outside any project a shell command may write: throwaway output, devices. Not edits. */
const SCRATCH = /^(?:\/tmp\/|\/var\/tmp\/|\/dev\/|\/proc\/)/;

/** The tools that run a shell command. */
const SHELL_TOOLS = new Set(["Bash", "shell", "local_shell", "exec_command", "run_shell_command"]);

function lineCount(text: unknown): number {
  return typeof text === "string" && text !== "" ? text.split("\n").length : 0;
}

/** The command of a shell tool's input: Claude Code's and Gemini CLI's `command`, Codex's array or `cmd`. */
const commandOf = (i: Record<string, unknown>) =>
  str(i.command) ?? (Array.isArray(i.command) ? i.command.join(" ") : undefined) ?? str(i.cmd);

/**
 * What a call of a tool other than a shell touches, from its name and input, for the tools of Claude Code,
 * Codex CLI and Gemini CLI. Unknown tools touch nothing reins can name (their calls still count).
 */
function touchOf(tool: string, i: Record<string, unknown>): Omit<ToolTouch, "tool" | "inputHash"> {
  const path = str(i.file_path) ?? str(i.absolute_path) ?? str(i.path) ?? str(i.notebook_path);
  switch (tool) {
    case "Read":
    case "read_file":
    case "read_many_files":
      return path === undefined ? {} : { reads: [path] };
    case "Write":
    case "write_file":
      return path === undefined ? {} : { writes: [path], linesChanged: lineCount(i.content) };
    case "Edit":
    case "replace":
      return path === undefined
        ? {}
        : { writes: [path], linesChanged: lineCount(i.old_string) + lineCount(i.new_string) };
    case "MultiEdit": {
      const edits = Array.isArray(i.edits) ? (i.edits as Record<string, unknown>[]) : [];
      const lines = edits.reduce((n, e) => n + lineCount(e.old_string) + lineCount(e.new_string), 0);
      return path === undefined ? {} : { writes: [path], linesChanged: lines };
    }
    case "NotebookEdit":
      return path === undefined ? {} : { writes: [path], linesChanged: lineCount(i.new_source) };
    case "apply_patch": {
      // Codex's hooks carry the patch as `tool_input.command`; its model-facing tool calls as `input`.
      const patch = str(i.input) ?? str(i.patch) ?? str(i.command) ?? "";
      const files = [...patch.matchAll(/^\*\*\* (?:Update|Add|Delete) File: (.+)$/gm)].map((m) =>
        (m[1] ?? "").trim(),
      );
      return files.length === 0
        ? {}
        : { writes: files, linesChanged: patch.split("\n").filter((l) => /^[+-]/.test(l)).length };
    }
    default:
      return {};
  }
}

/** What a shell command touches: the command, and the files it writes and removes, scratch files left out. */
function shellTouch(
  command: string,
  commands: readonly ShellCommand[],
): Omit<ToolTouch, "tool" | "inputHash"> {
  const effects = shellEffects(commands);
  const writes = effects.writes.filter((w) => !SCRATCH.test(w));
  const removes = effects.removes.filter((w) => !SCRATCH.test(w));
  return {
    command,
    ...(writes.length > 0 ? { writes } : {}),
    ...(removes.length > 0 ? { removes } : {}),
  };
}

/** How a usage's USD was found: the agent's own figure, the price table, a family's price, or a guess. */
export type Pricing = "agent" | "table" | `family:${string}` | "unknown";

/** The words of a model name that say what it is, without its vendor prefix, versions and dates. */
function modelWords(model: string): string[] {
  return model
    .replace(/^[^/]*\//, "")
    .toLowerCase()
    .split(/[-_.\s:]+/)
    .filter((w) => w !== "" && !/^\d/.test(w));
}

/**
 * The price of a model: the longest prefix of it in the policy's table; else the listed model of its family
 * (the same vendor word, the most other words in common: `claude-opus-5-5` is priced as `claude-opus-4`);
 * else the table's highest price. A model reins has never heard of must never spend for free.
 */
export function priceOf(policy: Policy, model: string | undefined): { key: string | null; pricing: Pricing } {
  const keys = Object.keys(policy.prices);
  if (model !== undefined) {
    let best: string | null = null;
    for (const prefix of keys)
      if (model.startsWith(prefix) && (best === null || prefix.length > best.length)) best = prefix;
    if (best !== null) return { key: best, pricing: "table" };
    const words = modelWords(model);
    let family: string | null = null;
    let score = 0;
    for (const key of keys) {
      const theirs = modelWords(key);
      if (theirs[0] !== words[0]) continue;
      const shared = theirs.filter((w) => words.includes(w)).length;
      // More words in common wins; on a tie, the one with fewer words of its own (the plain model).
      if (
        shared > score ||
        (shared === score && family !== null && theirs.length < modelWords(family).length)
      ) {
        family = key;
        score = shared;
      }
    }
    if (family !== null) return { key: family, pricing: `family:${family}` };
  }
  let highest: string | null = null;
  for (const key of keys)
    if (highest === null || (policy.prices[key]?.input ?? 0) > (policy.prices[highest]?.input ?? 0))
      highest = key;
  return { key: highest, pricing: "unknown" };
}

/** USD for a usage at the price of `key` in the policy's table (the key `priceOf` found for its model). */
export function costOf(
  policy: Policy,
  key: string | null,
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number },
): number {
  const price = key === null ? undefined : policy.prices[key];
  if (price === undefined) return 0;
  return (
    (usage.input * price.input +
      usage.output * price.output +
      usage.cacheRead * price.cacheRead +
      usage.cacheWrite * price.cacheWrite) /
    1e6
  );
}

/*
 * The adapter kit: what every agent adapter does the same way, whatever its protocol. Each adapter keeps
 * only its field names and reply forms.
 */

/** The answer that decides a reply: the most severe one, a person's confirmation breaking a tie. */
export function worstAnswer(answers: readonly Answer[]): NonNullable<Answer> | null {
  const rank = { allow: 0, warn: 1, block: 2 } as const;
  let found: NonNullable<Answer> | null = null;
  for (const a of answers) {
    if (a === null) continue;
    if (
      found === null ||
      rank[a.verdict] > rank[found.verdict] ||
      (a.verdict === found.verdict && a.needsHuman && !found.needsHuman)
    )
      found = a;
  }
  return found;
}

/** What reins tells the agent for an answer: its corrective instructions. */
export function reasonOf(answer: NonNullable<Answer>): string {
  return `reins: ${answer.instructions.join(" ")}`;
}

/**
 * What an answer asks of the agent's reply: nothing (allow), `deny` (block), `ask` (a person must confirm;
 * an agent without an ask form denies), or `note` (a warning for the model), with the reason.
 */
export function verdictOf(
  answer: Answer | undefined,
): { form: "deny" | "ask" | "note"; reason: string } | null {
  if (answer === null || answer === undefined || answer.verdict === "allow") return null;
  const reason = reasonOf(answer);
  if (answer.verdict === "block") return { form: "deny", reason };
  return { form: answer.needsHuman ? "ask" : "note", reason };
}

/** The `hookSpecificOutput.additionalContext` reply that Claude Code, Codex CLI and Gemini CLI all read. */
export function contextReply(hookEventName: string, additionalContext: string): object {
  return { hookSpecificOutput: { hookEventName, additionalContext } };
}

const taskOf = (task: string | undefined) => (task !== undefined && task !== "" ? { task } : {});

/**
 * A tool call as reins names it: the tool, its input's hashes, what it touches, the agent's call id. A shell
 * command's shape is its command with noise removed (comments, environment assignments, counters, temporary
 * paths), whatever else the tool's input holds (a description that changes on every retry).
 */
export function toolTouch(tool: string, input: unknown, callId?: string): ToolTouch {
  const fields = (input !== null && typeof input === "object" ? input : {}) as Record<string, unknown>;
  const command = SHELL_TOOLS.has(tool) ? commandOf(fields) : undefined;
  // Canonical once: a multi-megabyte Write's input is both hashed and shaped.
  const text = canonical(input ?? null);
  // Split once, for what the command touches and for its shape.
  const shell = command === undefined ? null : { command, commands: splitShell(command) };
  return {
    tool,
    // As `hashOf(input)`: a string is hashed as it is, any other value by its canonical text.
    inputHash: hashOf(typeof input === "string" ? input : text),
    shapeHash: shell === null ? shapeOf(text) : hashOf(["shell", commandShape(shell.commands)]),
    ...(shell === null ? touchOf(tool, fields) : shellTouch(shell.command, shell.commands)),
    ...(callId !== undefined && callId !== "" ? { callId } : {}),
  };
}

/** How a tool call ended, as the adapter read it from the agent's input. */
export interface ToolOutcome {
  failed: boolean;
  /** The command's exit code, when the agent reported it (or its own record holds it). */
  exitCode?: number;
  /** What the call printed, as text: the error for a failure; check results and error keys are read from it. */
  text: string;
  /** What the call produced, as the agent reported it; hashed with noise removed, so equal means unchanged. */
  output: unknown;
}

/**
 * What identifies a failure's error: its text with noise (times, ids, numbers) removed, hashed. The agent's
 * exit-status line says nothing of the error, and a failure with no text at all (grep finding nothing) has
 * no error to repeat: it gets no key.
 */
function errorKey(errorText: string): { errorHash?: string } {
  const text = errorText
    .slice(0, 4_000)
    .replace(/^\s*(?:Exit code:?|Process exited with code|Exit Code:)\s*-?\d+\s*$/gim, "")
    .trim();
  return text === "" ? {} : { errorHash: shapeOf(canonical(text)) };
}

/**
 * A finished tool call: `tool.completed`, plus `verification.ran` when its command is one of the policy's
 * checks and the call gave evidence of the result (its own exit code, or a test summary in its output); a
 * check without evidence did not run, as far as reins can tell.
 */
export function toolEndEvents(
  touch: ToolTouch,
  outcome: ToolOutcome,
  policy: Policy,
  task?: string,
): EventInput[] {
  const output = outcome.output ?? null;
  const events: EventInput[] = [
    {
      kind: "tool.completed",
      ...taskOf(task),
      ...touch,
      outcome: outcome.failed ? "failure" : "success",
      outputHash: hashOf(outputShape(typeof output === "string" ? output : canonical(output))),
      ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
      ...(outcome.failed ? errorKey(outcome.text) : {}),
    },
  ];
  const command = touch.command;
  if (command === undefined) return events;
  const pipeline = pipelineOfLast(command);
  const check = checkOf(pipeline, checkPatterns(policy));
  if (check === null) return events;
  // A check that failed with no exit code or summary to read (a timeout, an interrupt) did not pass: that
  // much is evidence. One with no evidence either way did not run, as far as reins can tell.
  const result =
    checkResult(pipeline, outcome.exitCode, outcome.text, check.stage) ??
    (outcome.failed ? { passed: false } : null);
  if (result === null) return events;
  events.push({
    kind: "verification.ran",
    ...taskOf(task),
    name: check.name,
    passed: result.passed,
    command,
    tier: "fast",
    ...(result.failing !== undefined ? { failing: result.failing } : {}),
    ...(result.passed ? {} : { fingerprint: hashOf(failureFingerprint(outcome.text)) }),
  });
  return events;
}

/** The agent's "done": a session-level claim, with whether its last message holds the completion promise. */
export function claimEvent(policy: Policy, lastMessage: unknown, task?: string): EventInput {
  const promise = policy.completion.promise;
  const last = typeof lastMessage === "string" ? lastMessage : canonical(lastMessage ?? "");
  return {
    kind: "completion.claimed",
    ...taskOf(task),
    level: "session",
    ...(promise !== null ? { promiseMet: last.includes(promise) } : {}),
  };
}

/** How `promptTaskEvents` treats a prompt under the id of the task still in flight. */
export interface PromptTaskOptions {
  /**
   * `continue`: the task goes on (a turn's prompts share its id); `restart`: it ends (done) and starts
   * anew. @default "continue"
   */
  sameTask?: "continue" | "restart";
}

/**
 * A new prompt (turn) as tasks named `<prefix><id>`: the previous one of that kind still in flight ends
 * (done), the new one starts. Needs the scope's state before the call.
 */
export function promptTaskEvents(
  before: State | null,
  task: string | undefined,
  prefix: string,
  options: PromptTaskOptions = {},
): EventInput[] {
  const events: EventInput[] = [];
  const previous = before?.task ?? "";
  const ends = previous !== task || options.sameTask === "restart";
  if (previous.startsWith(prefix) && ends && before?.inFlight.includes(previous) === true) {
    events.push({ kind: "task.ended", task: previous, status: "done" });
  }
  if (task !== undefined && task !== "") events.push({ kind: "task.started", task, taskType: "prompt" });
  return events;
}

/** `inputs` as events of `scope` at `at` (epoch ms), in order. */
export function eventsAt(scope: string, at: number, inputs: readonly EventInput[]): ReinsEvent[] {
  return inputs.map((input) => ({ ...input, at, scope }));
}
