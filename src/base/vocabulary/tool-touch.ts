/** A tool call as reins names it: its input's hashes and shape (noise removed), and what it reads, writes and runs. */
import type { ToolTouch } from "../core/reins-event.js";
import { commandShape } from "./shapes.js";
import { splitShell, type ShellCommand } from "./shell.js";
import { shellEffects } from "./shell-writes.js";
import { canonical, hashOf } from "./hash.js";

const NOISE: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>"],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b/g, "<time>"],
  [/(\/tmp|\/var\/folders|\/private\/var)\/[^\s"']+/g, "<tmp>"],
  [/\b[0-9a-f]{8,}\b/gi, "<hex>"],
  [/\d+/g, "<n>"],
];

/** A value's canonical text with noise (uuids, timestamps, temp paths, hex ids, numbers) replaced, hashed. */
export function shapeOf(canonicalText: string): string {
  let text = canonicalText.slice(0, 20_000);
  for (const [pattern, mark] of NOISE) text = text.replace(pattern, mark);
  return hashOf(text);
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Files outside any project a shell command may write: throwaway output, devices. Not edits. */
const SCRATCH = /^(?:\/tmp\/|\/var\/tmp\/|\/dev\/|\/proc\/)/;

/** The tools that run a shell command. */
const SHELL_TOOLS = new Set(["Bash", "shell", "local_shell", "exec_command", "run_shell_command", "bash"]);

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
    case "view":
      return path === undefined ? {} : { reads: [path] };
    case "Write":
    case "write_file":
      return path === undefined ? {} : { writes: [path], linesChanged: lineCount(i.content) };
    case "create": // Copilot CLI's file tools: create {path, file_text}, edit {path, old_str, new_str}
      return path === undefined ? {} : { writes: [path], linesChanged: lineCount(i.file_text) };
    case "edit": // Copilot CLI's {old_str, new_str}; Qwen Code's {old_string, new_string}
      return path === undefined
        ? {}
        : {
            writes: [path],
            linesChanged: lineCount(i.old_str ?? i.old_string) + lineCount(i.new_str ?? i.new_string),
          };
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
