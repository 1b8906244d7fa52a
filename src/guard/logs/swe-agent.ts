/** Reads a SWE-agent trajectory as the hook calls Claude Code would have made for the same work. */
import { posix } from "node:path";
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import { addLeftoverUsage, type LoggedCall, type LoggedRun } from "./run.js";
import { num, rec, str, type Row } from "./values.js";

/**
 * SWE-agent trajectories (`<instance>.traj`, 0.x and 1.x): `{ trajectory: [{ action, observation, response,
 * thought, state, execution_time?, query? }], history, info: { exit_status, submission, model_stats }, ...}`.
 * Read as Claude Code would have reported the same work: the editor and file commands as Read, Write and
 * Edit, `submit` as a Stop (the agent's "done"), anything else as Bash. SWE-agent keeps no exit codes, so a
 * call fails only when its observation says it timed out; it keeps no clock either, so time starts at 0 and
 * advances by each step's `execution_time` plus a second for the model. Its usage is only the run's totals
 * (`model_stats`), recorded once on the last call: per-step usage is not in the format.
 */

/** A value that may be JSON text (0.x `state`, 1.x `replay_config`) or already an object. */
function objectOf(v: unknown): Row {
  if (typeof v !== "string") return rec(v);
  try {
    return rec(JSON.parse(v));
  } catch {
    return {};
  }
}

/**
 * Whether a parsed JSON value is a SWE-agent-family trajectory, by its structure: a `trajectory` list of
 * steps that each carry an `action` or an `observation` (or an empty one beside a `history`). Other keys
 * (a `messages` list some of the family write) change nothing; mini-swe-agent's files are told apart first.
 */
export function isSweAgent(data: unknown): boolean {
  return sweAgentMismatch(data) === null;
}

/** Why `data` is not a SWE-agent trajectory (the field that is missing), or null when it is one. */
export function sweAgentMismatch(data: unknown): string | null {
  const d = rec(data);
  if (!Array.isArray(d.trajectory)) return "no `trajectory` list";
  if (d.trajectory.length === 0)
    return Array.isArray(d.history) ? null : "an empty `trajectory` and no `history` list";
  const bad = d.trajectory.findIndex((step) => {
    const s = rec(step);
    return !("action" in s) && !("observation" in s);
  });
  return bad < 0 ? null : `trajectory[${bad}] has no \`action\` or \`observation\``;
}

/** The words of a shell command line (quotes and backslashes as a POSIX shell reads them). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      const close = end < 0 ? line.length : end;
      word = (word ?? "") + line.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      word ??= "";
      for (i++; i < line.length && line.charAt(i) !== '"'; i++) {
        if (line.charAt(i) === "\\" && /["\\$`]/.test(line.charAt(i + 1))) i++;
        word += line.charAt(i);
      }
    } else {
      if (c === "\\") i++;
      word = (word ?? "") + line.charAt(i);
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The `--name value` options of `str_replace_editor` (SWE-agent shell-quotes each value into one word). */
function options(words: string[]): Row {
  const out: Row = {};
  for (let i = 0; i < words.length; i++) {
    const name = /^--(file_text|old_str|new_str|insert_line|view_range)$/.exec(words[i] ?? "")?.[1];
    if (name !== undefined) out[name] = words[++i] ?? "";
  }
  return out;
}

interface Where {
  cwd: string;
  open: string | undefined;
}

/** A SWE-agent command as the Claude Code tool call that does the same, or null for `submit`. */
function claudeTool(action: string, where: Where): { tool_name: string; tool_input: Row } | null {
  if (/^submit\b/.test(action)) return null;
  const abs = (p: string) => (p.startsWith("/") ? p : posix.join(where.cwd, p));
  const bash = { tool_name: "Bash", tool_input: { command: action } };
  // 0.x (and 1.x windowed) `edit N:M` replaces lines of the open file; the old lines are not in the log, so
  // the lines it names stand for them: the same text written over other lines is another edit.
  const ranged = /^edit\s+(\d+:\d+)\s*\n([\s\S]*?)\n?end_of_edit\s*$/.exec(action);
  if (ranged !== null)
    return where.open === undefined
      ? bash
      : {
          tool_name: "Edit",
          tool_input: {
            file_path: where.open,
            old_string: "",
            new_string: ranged[2] ?? "",
            line_range: ranged[1] ?? "",
          },
        };
  const words = shellWords(action);
  const [name, first, second] = words;
  if (name === "str_replace_editor" && second !== undefined) {
    const o = options(words.slice(3));
    const file_path = abs(second);
    if (first === "view") return { tool_name: "Read", tool_input: { file_path } };
    if (first === "create")
      return { tool_name: "Write", tool_input: { file_path, content: str(o.file_text) ?? "" } };
    if (first === "str_replace")
      return {
        tool_name: "Edit",
        tool_input: { file_path, old_string: str(o.old_str) ?? "", new_string: str(o.new_str) ?? "" },
      };
    // An insert names its line: the same text inserted elsewhere is another edit.
    if (first === "insert")
      return {
        tool_name: "Edit",
        tool_input: {
          file_path,
          old_string: "",
          new_string: str(o.new_str) ?? "",
          insert_line: str(o.insert_line) ?? "",
        },
      };
  }
  if (name === "open" && first !== undefined)
    return { tool_name: "Read", tool_input: { file_path: abs(first) } };
  if (name === "create" && first !== undefined)
    return { tool_name: "Write", tool_input: { file_path: abs(first), content: "" } };
  // 1.x windowed `edit <search> <replace>` on the open file.
  if (name === "edit" && first !== undefined && second !== undefined && where.open !== undefined)
    return {
      tool_name: "Edit",
      tool_input: { file_path: where.open, old_string: first, new_string: second },
    };
  return bash;
}

/** The text of a history message (a string, or a list of `{ type: "text", text }` parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((p) => str(rec(p).text) ?? "").join("") : "";
}

/** Actions that run nothing in the environment: giving up, or SWE-agent's own exits after an error. */
const NOT_RUN = /^(exit|exit_forfeit|skip|exit_(context|cost|error|format|api))$/;
/** How 0.x ("EXECUTION TIMED OUT") and 1.x ("was cancelled because it took more than N seconds") say so. */
const TIMED_OUT = /EXECUTION TIMED OUT|was cancelled because it took more than \d+(\.\d+)? seconds/;

/**
 * How the family's editors say an edit was not applied: a linter rejection (SWE-agent's `edit`, OpenHands'
 * editor), a replacement that found nothing or too much, a create over an existing file, a bad path. Read
 * from the observation's first lines only, so an applied edit whose new text mentions an error stays applied.
 */
const NOT_APPLIED =
  /^\[?Your proposed edit has introduced new syntax error|Your changes have NOT been applied|^(ERROR:\s*)?No replacement was performed|^(ERROR:\s*)?Invalid `\w+` parameter|Cannot overwrite files using command `create`|^(ERROR:\s*)?The path \S+ does not exist/m;

/** Whether `observation` of an edit says the edit was not applied. */
function notApplied(observation: string): boolean {
  return (
    NOT_APPLIED.test(observation.split("\n").slice(0, 3).join("\n")) ||
    /Your changes have NOT been applied/.test(observation)
  );
}

/** Moves `where` to a step's state: its working directory and open file ("n/a": none). */
function follow(where: Where, state: Row): void {
  const dir = str(state.working_dir);
  if (dir !== undefined && dir !== "") where.cwd = dir;
  const open = str(state.open_file);
  if (open !== undefined) where.open = open === "n/a" || open === "" ? undefined : open;
}

/** Reads a parsed SWE-agent trajectory. */
export function readSweAgent(data: unknown, source: string, fallbackId: string): LoggedRun {
  const d = rec(data);
  const replay = objectOf(d.replay_config);
  const id = str(rec(replay.problem_statement).id) ?? fallbackId;
  const steps = Array.isArray(d.trajectory) ? d.trajectory.map(rec) : [];
  const where: Where = { cwd: "/testbed", open: undefined };
  const firstDir = str(objectOf(steps[0]?.state).working_dir);
  if (firstDir !== undefined && firstDir !== "") where.cwd = firstDir;
  const base = () => ({ session_id: id, cwd: where.cwd, prompt_id: "task" });
  const history = Array.isArray(d.history) ? d.history.map(rec) : [];
  const task = history.find((m) => m.role === "user" && m.is_demo !== true);
  const prompt = task !== undefined ? textOf(task.content) : (str(rec(replay.problem_statement).text) ?? "");

  let clock = 0;
  const calls: LoggedCall[] = [
    { at: clock, input: { ...base(), hook_event_name: "SessionStart", source: "startup" } },
    { at: clock, input: { ...base(), hook_event_name: "UserPromptSubmit", prompt } },
  ];
  let step = 0;
  for (const s of steps) {
    const action = (str(s.action) ?? "").trim();
    const state = objectOf(s.state);
    // 0.x writes the state a step started from (as JSON text), 1.x the state after it (an object).
    const before = typeof s.state === "string";
    if (before) follow(where, state);
    const seconds = typeof s.execution_time === "number" && s.execution_time >= 0 ? s.execution_time : 1;
    if (action === "" || NOT_RUN.test(action)) continue;
    clock += 1000;
    const tool = claudeTool(action, where);
    if (tool === null) {
      const message = str(s.response) ?? "";
      calls.push({
        at: clock,
        input: {
          ...base(),
          hook_event_name: "Stop",
          stop_hook_active: false,
          last_assistant_message: message,
        },
      });
    } else {
      step += 1;
      const call = { ...tool, tool_use_id: `step-${step}` };
      calls.push({ at: clock, input: { ...base(), hook_event_name: "PreToolUse", ...call } });
      const seen = str(s.observation) ?? "";
      const rejected = tool.tool_name !== "Bash" && tool.tool_name !== "Read" && notApplied(seen);
      const input = rejected
        ? // An edit the editor refused wrote nothing: a failed call, as Claude Code reports a failed Edit.
          { ...base(), hook_event_name: "PostToolUseFailure", ...call, error: seen, is_interrupt: false }
        : TIMED_OUT.test(seen)
          ? {
              ...base(),
              hook_event_name: "PostToolUseFailure",
              ...call,
              error: `Command timed out\n${seen}`,
              is_interrupt: true,
            }
          : {
              ...base(),
              hook_event_name: "PostToolUse",
              ...call,
              tool_response: { stdout: seen, stderr: "", interrupted: false, isImage: false },
            };
      calls.push({ at: clock + 1, input });
    }
    clock += Math.round(seconds * 1000);
    // After the step: a 1.x state says where the next command starts from; an `open` or `create` opens its
    // file (a 0.x state says so only on the next step, and a 1.x state may not say).
    if (!before) follow(where, state);
    const opened = tool !== null && tool.tool_name !== "Bash" && /^(open|create)\b/.test(action);
    if (opened && (before || str(state.open_file) === undefined)) where.open = str(tool.tool_input.file_path);
  }

  const stats = rec(rec(d.info).model_stats);
  if (Object.keys(stats).length > 0) {
    const model = str(rec(rec(replay.agent).model).name);
    const cost = stats.instance_cost;
    const usage: UsageRecord = {
      id: `${id}#total`,
      // SWE-agent counts the whole prompt it sent; it records no cache use.
      input: num(stats.tokens_sent),
      output: num(stats.tokens_received),
      cacheRead: 0,
      cacheWrite: 0,
      ...(model !== undefined && model !== "" ? { model } : {}),
      // A zero cost means SWE-agent could not price the model: the policy's price table is the better guess.
      ...(typeof cost === "number" && Number.isFinite(cost) && cost > 0 ? { costUsd: cost } : {}),
    };
    addLeftoverUsage(calls, [usage]);
  }
  return { id, agent: "claude", format: "swe-agent", source, calls };
}
