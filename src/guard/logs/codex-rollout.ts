/** Reads a Codex CLI rollout back as the hook calls Codex made. */
import { openAiUsage, rolloutExit, rolloutModel, rolloutUsage } from "../hooks/rollout.js";
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import { addLeftoverUsage, timeOf, type LoggedCall, type LoggedRun } from "./run.js";
import { num, rec, str, type Row } from "./values.js";

/**
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): `{timestamp, type, payload}` lines of
 * `session_meta`, `turn_context`, `response_item` (messages, `function_call`, `function_call_output`,
 * `custom_tool_call`...) and `event_msg` (`task_started`, `task_complete`, `token_count`, command ends).
 * Read back as the hook calls Codex makes: SessionStart, UserPromptSubmit per turn, PreToolUse and
 * PostToolUse per tool call, Stop per "done" (each one a Stop hook sent back with feedback, and the end of
 * the turn). A shell call's PostToolUse carries the exit code the rollout recorded, which Codex's own hook
 * input leaves out.
 */

/** Whether JSONL rows are a Codex CLI rollout. */
export function isCodexRollout(rows: readonly Row[]): boolean {
  return rows.some((r) => r.type === "session_meta" && typeof rec(r.payload).id === "string");
}

/** The text of a Responses API message's content parts. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content.map((p) => str(rec(p).text) ?? "").join("\n");
}

function parseArgs(text: unknown): Row {
  if (typeof text !== "string") return rec(text);
  try {
    return rec(JSON.parse(text));
  } catch {
    return {};
  }
}

/** A model-facing tool call as Codex names it in its hooks: shell tools are `Bash` with `{command}`. */
function hookTool(name: string, args: Row): { tool_name: string; tool_input: unknown } | null {
  if (name === "exec_command" || name === "shell" || name === "local_shell" || name === "container.exec") {
    const raw = args.cmd ?? args.command;
    const argv = Array.isArray(raw) ? raw.map(String) : null;
    // `["bash", "-lc", "<script>"]` runs the script: the script is the command.
    const command =
      argv !== null
        ? argv.length === 3 && /^-l?c$/.test(argv[1] ?? "")
          ? (argv[2] ?? "")
          : argv.join(" ")
        : str(raw);
    return command === undefined ? null : { tool_name: "Bash", tool_input: { command } };
  }
  if (name === "apply_patch")
    return { tool_name: "apply_patch", tool_input: { command: str(args.input) ?? "" } };
  if (name === "update_plan") return null; // no hook runs for Codex's plan tool
  return { tool_name: name, tool_input: args };
}

/** Exit codes of command executions by call id, from the events Codex logs when a command ends. */
function exitCodes(rows: readonly Row[]): Map<string, number> {
  const codes = new Map<string, number>();
  for (const row of rows) {
    const exit = rolloutExit(row);
    if (exit !== null) codes.set(exit[0], exit[1]);
  }
  return codes;
}

/** What a call's output says: the text, with its exit code made explicit when the rollout knows it. */
function responseOf(output: unknown, code: number | undefined): unknown {
  const text = typeof output === "string" ? output : JSON.stringify(output ?? "");
  const wrapped = parseArgs(text);
  if (typeof wrapped.output === "string") {
    // Older rollouts: `{"output": "...", "metadata": {"exit_code": N}}`.
    const exit = rec(wrapped.metadata).exit_code;
    return { output: wrapped.output, ...(typeof exit === "number" ? { exit_code: exit } : {}) };
  }
  if (code === undefined || /^(?:Exit code:|Process exited with code)/m.test(text.split("\n", 3).join("\n")))
    return text;
  return `Exit code: ${code}\n${text}`;
}

/** Reads the parsed lines of a Codex CLI rollout. */
export function readCodexRollout(rows: readonly Row[], source: string, fallbackId: string): LoggedRun {
  const meta = rec(rows.find((r) => r.type === "session_meta")?.payload);
  const id = str(meta.id) ?? fallbackId;
  const base = { session_id: id, ...(typeof meta.cwd === "string" ? { cwd: meta.cwd } : {}) };
  const codes = exitCodes(rows);
  const records = rows.some((r) => r.type === "token_usage_record");
  const calls: LoggedCall[] = [];
  const tools = new Map<string, { tool_name: string; tool_input: unknown }>();
  let pending: UsageRecord[] = [];
  let clock = 0;
  let model: string | undefined;
  let turn: string | undefined;
  let turns = 0;
  let prompted = false;
  let lastTotal: Row = {};
  const push = (input: Row) => {
    calls.push({
      at: clock,
      input: { ...base, ...(turn !== undefined ? { turn_id: turn } : {}), ...input },
      usage: pending,
    });
    pending = [];
  };

  for (const [n, row] of rows.entries()) {
    clock = Math.max(clock, timeOf(row.timestamp, clock));
    const p = rec(row.payload);
    if (row.type === "session_meta") {
      push({ hook_event_name: "SessionStart", source: "startup", ...(model !== undefined ? { model } : {}) });
    } else if (row.type === "turn_context") {
      model = rolloutModel(row) ?? model;
      if (typeof p.turn_id === "string" && p.turn_id !== turn) [turn, prompted] = [p.turn_id, false];
    } else if (row.type === "token_usage_record") {
      const usage = rolloutUsage(row, model, `${id}#${n}`);
      if (usage !== null) pending.push(usage);
    } else if (row.type === "event_msg") {
      if (p.type === "task_started" && typeof p.turn_id === "string") [turn, prompted] = [p.turn_id, false];
      else if (p.type === "user_message" && !prompted) {
        if (typeof p.turn_id !== "string" && turn === undefined) turn = `turn-${++turns}`;
        prompted = true;
        push({ hook_event_name: "UserPromptSubmit", prompt: str(p.message) ?? "" });
      } else if (p.type === "token_count" && !records) {
        // Older rollouts: per-response usage is the growth of the running total.
        const total = rec(rec(p.info).total_token_usage);
        const delta: Row = {};
        for (const key of [
          "input_tokens",
          "cached_input_tokens",
          "output_tokens",
          "cache_write_input_tokens",
        ])
          delta[key] = num(total[key]) - num(lastTotal[key]);
        if (num(delta.input_tokens) + num(delta.output_tokens) > 0)
          pending.push(openAiUsage(`${id}#${n}`, delta, model));
        lastTotal = total;
      } else if (p.type === "task_complete") {
        push({
          hook_event_name: "Stop",
          stop_hook_active: false,
          last_assistant_message: str(p.last_agent_message) ?? "",
        });
        turn = undefined;
        prompted = false;
      }
    } else if (row.type === "response_item") {
      const kind = p.type;
      const text = textOf(p.content);
      if (kind === "message" && p.role === "user") {
        if (text.startsWith("<hook_prompt") && text.includes('hook_run_id="stop:')) {
          // A Stop hook sent the agent back to work: that "done" was a Stop call.
          push({ hook_event_name: "Stop", stop_hook_active: true, last_assistant_message: "" });
        } else if (!prompted && !text.startsWith("<") && text.trim() !== "") {
          prompted = true;
          push({ hook_event_name: "UserPromptSubmit", prompt: text });
        }
      } else if (kind === "function_call" || kind === "custom_tool_call" || kind === "local_shell_call") {
        const call = str(p.call_id) ?? str(p.id) ?? `${id}#${n}`;
        const args =
          kind === "custom_tool_call"
            ? { input: p.input }
            : kind === "local_shell_call"
              ? rec(p.action)
              : parseArgs(p.arguments);
        const tool = hookTool(str(p.name) ?? (kind === "local_shell_call" ? "local_shell" : "unknown"), args);
        if (tool === null) continue;
        tools.set(call, tool);
        push({ hook_event_name: "PreToolUse", ...tool, tool_use_id: call });
      } else if (kind === "function_call_output" || kind === "custom_tool_call_output") {
        const call = str(p.call_id) ?? "";
        const tool = tools.get(call);
        // A call a PreToolUse hook refused never ran, and no PostToolUse hook saw it.
        if (tool === undefined || String(p.output).startsWith("Command blocked by PreToolUse hook")) continue;
        push({
          hook_event_name: "PostToolUse",
          ...tool,
          tool_use_id: call,
          tool_response: responseOf(p.output, codes.get(call)),
        });
      }
    }
  }
  addLeftoverUsage(calls, pending);
  return { id, agent: "codex", format: "codex-rollout", source, calls };
}
