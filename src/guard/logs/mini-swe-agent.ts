/** Reads a mini-swe-agent trajectory as the hook calls Claude Code would have made for the same work. */
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import { addLeftoverUsage, type LoggedCall, type LoggedRun } from "./run.js";
import { num } from "./values.js";

/**
 * mini-swe-agent trajectories (`<instance>.traj.json`, format `mini-swe-agent-1`): every step is one bash
 * command in a fenced block of an assistant message, and the next user message holds its observation
 * (`<returncode>N</returncode>` and the output). Read as Claude Code would have reported the same work:
 * each command a `Bash` call with its real exit code and output, the model's usage after each call, and the
 * final submit command a Stop (the agent's "done").
 */

interface Message {
  role?: string;
  content?: unknown;
  extra?: { response?: { id?: string; created?: number; model?: string; usage?: Record<string, unknown> } };
}

/** Whether a parsed JSON value is a mini-swe-agent trajectory. */
export function isMiniSweAgent(data: unknown): boolean {
  const d = data as { trajectory_format?: unknown; messages?: unknown; info?: unknown };
  return (
    typeof d === "object" &&
    d !== null &&
    Array.isArray(d.messages) &&
    ((typeof d.trajectory_format === "string" && d.trajectory_format.startsWith("mini-swe-agent")) ||
      (typeof d.info === "object" && d.info !== null && "mini_version" in d.info))
  );
}

const BLOCK = /```(?:bash|sh)\s*\n([\s\S]*?)\n```/g;
/** The command mini-swe-agent's default config treats as the agent submitting its work. */
const SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

const text = (v: unknown): string =>
  typeof v === "string"
    ? v
    : Array.isArray(v)
      ? v
          .map((p) => {
            const part = typeof p === "string" ? p : (p as { text?: unknown }).text;
            return typeof part === "string" ? part : "";
          })
          .join("")
      : "";

/** The model call's usage in OpenAI's form (prompt tokens include the cached ones), with its reported cost. */
function usageOf(message: Message, fallbackId: string): UsageRecord | null {
  const response = message.extra?.response;
  const u = response?.usage;
  if (u === undefined || u === null) return null;
  const details = (u.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const cached = num(details.cached_tokens);
  const cost = u.cost;
  return {
    id: response?.id ?? fallbackId,
    input: Math.max(0, num(u.prompt_tokens) - cached),
    output: num(u.completion_tokens),
    cacheRead: cached,
    cacheWrite: 0,
    ...(typeof response?.model === "string" ? { model: response.model } : {}),
    ...(typeof cost === "number" && Number.isFinite(cost) ? { costUsd: cost } : {}),
  };
}

/** How a step's observation reads: its exit code and output, or a timeout. */
function observation(content: string): { exitCode: number | null; output: string; timedOut: boolean } {
  const code = /<returncode>(-?\d+)<\/returncode>/.exec(content);
  if (code !== null) {
    const output = content.slice(code.index + code[0].length).replace(/^\s*<output>\n?|<\/output>\s*$/g, "");
    return { exitCode: Number(code[1]), output, timedOut: false };
  }
  if (/timed out and has been killed/.test(content))
    return {
      exitCode: null,
      output: /<output>\n?([\s\S]*?)<\/output>/.exec(content)?.[1] ?? "",
      timedOut: true,
    };
  return { exitCode: null, output: content, timedOut: false };
}

/** Reads a parsed mini-swe-agent trajectory. */
export function readMiniSweAgent(data: unknown, source: string, fallbackId: string): LoggedRun {
  const d = data as { instance_id?: unknown; messages: Message[] };
  const id = typeof d.instance_id === "string" && d.instance_id !== "" ? d.instance_id : fallbackId;
  const base = { session_id: id, cwd: "/testbed", prompt_id: "task" };
  const messages = d.messages;
  let clock = 0;
  const first = messages.find((m) => m.extra?.response?.created !== undefined)?.extra?.response?.created;
  if (typeof first === "number") clock = first * 1000;
  const calls: LoggedCall[] = [
    { at: clock, input: { ...base, hook_event_name: "SessionStart", source: "startup" } },
  ];
  const prompt = messages.find((m, i) => m.role === "user" && i > 0);
  calls.push({
    at: clock,
    input: { ...base, hook_event_name: "UserPromptSubmit", prompt: text(prompt?.content) },
  });

  let pending: UsageRecord[] = [];
  let step = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message?.role !== "assistant") continue;
    const created = message.extra?.response?.created;
    clock = typeof created === "number" ? Math.max(clock, created * 1000) : clock + 1000;
    const usage = usageOf(message, `${id}#${i}`);
    if (usage !== null) pending.push(usage);
    const content = text(message.content);
    const blocks = [...content.matchAll(BLOCK)].map((m) => m[1] ?? "");
    // mini-swe-agent runs nothing unless the message holds exactly one command (it answers a format error).
    if (blocks.length !== 1) continue;
    const command = (blocks[0] ?? "").trim();
    if (command.includes(SUBMIT)) {
      calls.push({
        at: clock,
        input: { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: content },
        usage: pending,
      });
      pending = [];
      break;
    }
    step += 1;
    const tool = { tool_name: "Bash", tool_input: { command }, tool_use_id: `step-${step}` };
    calls.push({ at: clock, input: { ...base, hook_event_name: "PreToolUse", ...tool } });
    const next = messages[i + 1];
    if (next?.role !== "user") continue;
    const seen = observation(text(next.content));
    const done = { at: clock + 1, usage: pending };
    pending = [];
    if (seen.exitCode === 0) {
      calls.push({
        ...done,
        input: {
          ...base,
          hook_event_name: "PostToolUse",
          ...tool,
          tool_response: { stdout: seen.output, stderr: "", interrupted: false, isImage: false },
        },
      });
    } else {
      // Claude Code reports a failed or timed-out Bash call as PostToolUseFailure with this error text.
      const error = seen.timedOut
        ? `Command timed out\n${seen.output}`
        : `Exit code ${seen.exitCode ?? 1}\n${seen.output}`;
      calls.push({
        ...done,
        input: {
          ...base,
          hook_event_name: "PostToolUseFailure",
          ...tool,
          error,
          is_interrupt: seen.timedOut,
        },
      });
    }
  }
  addLeftoverUsage(calls, pending);
  return { id, agent: "claude", format: "mini-swe-agent", source, calls };
}
