/** opencode's and Kilo Code's hook protocol: what reins' plugin sends for each of their plugin hooks, and the replies. */
import * as z from "zod";
import type { AgentAdapter, AgentName, HookContext, HookPlan } from "./agent-adapter.js";
import { canonical, hashOf } from "../../base/vocabulary/hash.js";
import { claimEvent, toolEndEvents, type ToolOutcome } from "../../base/vocabulary/event-builders.js";
import { verdictOf, worstAnswer } from "../../base/vocabulary/replies.js";
import { usageEvent } from "../../base/vocabulary/usage.js";
import { toolTouch } from "../../base/vocabulary/tool-touch.js";
import { sessionIdSchema } from "./session-id.js";
import { statusLine } from "./status-line.js";

/**
 * opencode (and Kilo Code, built on it) has no command hooks: a JS plugin in `.opencode/plugins/` (Kilo:
 * `.kilo/plugins/`) sees every tool call (`tool.execute.before` throws to refuse it, the error reaching the
 * model as the tool's result; `tool.execute.after` sees its output), every message (`message.updated` with
 * its tokens and cost, fired many times for one message) and each prompt (`chat.message`). reins' plugin
 * (install/opencode-plugin.ts) sends one of these calls to the hook daemon for each, as JSON:
 *
 * - `session.start` / `prompt`: the turn opens (the status line comes back as `context`);
 * - `tool.before` / `tool.after`: `tool_name` and `tool_input` (opencode's own tool names and arguments),
 *   and after it `tool_output` (`{ output, metadata }`);
 * - `usage`: one finished assistant message (`message`: its `id`, `tokens`, `cost`, `modelID`), sent once;
 * - `stop`: a step's text is complete and it made no tool call: the model says it is done.
 *
 * Replies: `{ decision: "deny", reason }` refuses a tool call or a stop (the plugin throws, or adds the reason
 * as a user message so the loop takes another turn), `{ note }` is advice the plugin shows the person, and
 * `{ context }` is text the plugin adds to the system prompt.
 */

/** The calls reins' plugin makes; any other is refused as bad input (allowed, with one stderr line). */
export const OPENCODE_EVENTS = [
  "session.start",
  "prompt",
  "tool.before",
  "tool.after",
  "usage",
  "stop",
] as const;

/** The fields reins reads from the plugin's call; everything else is ignored. Built on first use. */
export const opencodeInput = z.lazy(() =>
  z
    .object({
      session_id: sessionIdSchema(),
      hook_event_name: z.enum(OPENCODE_EVENTS),
      cwd: z.string().max(4096).optional(),
      tool_name: z.string().max(256).optional(),
      tool_input: z.unknown().optional(),
      tool_output: z.unknown().optional(),
      message: z.unknown().optional(),
      last_message: z.string().optional(),
    })
    .loose(),
);

export type OpencodeInput = z.infer<typeof opencodeInput>;

const record = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});
const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
const text = (v: unknown) => (typeof v === "string" ? v : undefined);

/**
 * opencode's tool call in the vocabulary's words (tool-touch.ts): `bash` is a shell (`command`), `write`,
 * `edit` and `read` take `filePath` (and `oldString`/`newString`, `content`). Other tools keep their name.
 */
export function opencodeTool(tool: string, args: unknown): { name: string; input: unknown } {
  const a = record(args);
  const path = text(a.filePath) ?? text(a.path);
  switch (tool) {
    case "bash":
      return { name: "Bash", input: { command: a.command } };
    case "write":
      return { name: "Write", input: { file_path: path, content: a.content } };
    case "edit":
      return { name: "Edit", input: { file_path: path, old_string: a.oldString, new_string: a.newString } };
    case "read":
      return { name: "Read", input: { file_path: path } };
    default:
      return { name: tool, input: args };
  }
}

/**
 * How a tool call ended. opencode's `bash` reports the command's exit code in `metadata.exit` (null when it
 * was killed); its other tools throw on failure, which never reaches `tool.execute.after`, so a call seen
 * there without an exit code succeeded.
 */
export function opencodeOutcome(tool: string, output: unknown): ToolOutcome {
  const o = record(output);
  const metadata = record(o.metadata);
  const shown = text(o.output) ?? canonical(o.output ?? "");
  const exit = metadata.exit;
  const exitCode = typeof exit === "number" && Number.isInteger(exit) ? exit : undefined;
  const killed = tool === "bash" && exit === null;
  const failed = (exitCode !== undefined && exitCode !== 0) || killed;
  return {
    failed,
    text: shown,
    output: shown,
    ...(exitCode !== undefined ? { exitCode } : failed ? {} : { exitCode: 0 }),
  };
}

/**
 * One finished assistant message's usage. opencode's `tokens.input` leaves the cached tokens out (they are
 * `cache.read`), and `reasoning` is billed as output; `cost` is opencode's own price. The id is the message's:
 * the plugin sends a message once, and one sent again counts once.
 */
export function opencodeUsage(agent: AgentName, input: OpencodeInput, ctx: HookContext) {
  const m = record(input.message);
  const tokens = record(m.tokens);
  const cache = record(tokens.cache);
  const id = text(m.id);
  if (id === undefined) return [];
  const cost = m.cost;
  const model = text(m.modelID);
  return [
    usageEvent(
      {
        id: hashOf([agent, input.session_id, id]),
        input: count(tokens.input),
        output: count(tokens.output) + count(tokens.reasoning),
        cacheRead: count(cache.read),
        cacheWrite: count(cache.write),
        ...(typeof cost === "number" && cost > 0 ? { costUsd: cost } : {}),
        ...(model !== undefined ? { model } : {}),
      },
      ctx.policy,
    ),
  ];
}

/** Turns one call of reins' plugin into reins events and the plugin's reply. */
export function planOpencode(agent: AgentName, input: OpencodeInput, ctx: HookContext): HookPlan {
  const scope = `session:${input.session_id}`;
  const tool = opencodeTool(input.tool_name ?? "unknown", input.tool_input);
  const worst = (answers: Parameters<HookPlan["reply"]>[0]) => verdictOf(worstAnswer(answers), ctx.notices);
  const status: HookPlan["reply"] = (_answers, state) => ({
    context: [statusLine(state, ctx.policy), ...(ctx.notices?.("turn") ?? [])].join("\n"),
  });
  switch (input.hook_event_name) {
    case "session.start":
      return { scope, events: [{ kind: "session.started", agent }], reply: status, turn: "open" };
    case "prompt":
      return { scope, events: [], reply: status, turn: "open" };
    case "tool.before":
      return {
        scope,
        events: [{ kind: "tool.requested", ...toolTouch(tool.name, tool.input) }],
        reply: (answers) => {
          const verdict = worst(answers);
          if (verdict === null) return null;
          // opencode's plugins have no "ask": a person's confirmation becomes a deny with its reason.
          return verdict.form === "note"
            ? { note: verdict.reason }
            : { decision: "deny", reason: verdict.reason };
        },
      };
    case "tool.after":
      return {
        scope,
        events: toolEndEvents(
          toolTouch(tool.name, tool.input),
          opencodeOutcome(input.tool_name ?? "", input.tool_output),
          ctx.policy,
        ),
        // The tool already ran: a block takes effect at the next call; both are advice here.
        reply: (answers) => {
          const verdict = worst(answers);
          return verdict === null ? null : { note: verdict.reason };
        },
      };
    case "usage":
      return {
        scope,
        events: opencodeUsage(agent, input, ctx),
        reply: (answers) => {
          const verdict = worst(answers);
          return verdict === null ? null : { note: verdict.reason };
        },
      };
    case "stop":
      return {
        scope,
        turn: "close",
        events: [claimEvent(ctx.policy, input.last_message)],
        reply: (answers) => {
          const verdict = verdictOf(answers[answers.length - 1], ctx.notices);
          if (verdict === null) return null;
          return verdict.form === "deny"
            ? { decision: "deny", reason: verdict.reason }
            : { note: verdict.reason };
        },
      };
  }
}

function adapterFor(name: AgentName): AgentAdapter<OpencodeInput> {
  return {
    name,
    input: opencodeInput,
    session: (input) => input.session_id,
    cwd: (input) => input.cwd,
    // opencode gives a plugin the project as an argument, not in the environment: the plugin sends `cwd`.
    projectEnv: [],
    needsState: () => false,
    plan: (input, ctx) => planOpencode(name, input, ctx),
  };
}

/** opencode's protocol, through reins' plugin. */
export const opencode = adapterFor("opencode");

/** Kilo Code's: the same plugin, in `.kilo/plugins/`. */
export const kilo = adapterFor("kilo");
