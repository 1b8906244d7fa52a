/**
 * `reins mcp`: reins' tools for any MCP-capable agent, over stdio. An agent reads its task and the spec,
 * verifies its own work by the plan's checks (reins runs them), and may set a task complete only after a
 * verify passed on the tree as it is.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { own } from "../control/graph.js";
import { ReinsError } from "../../base/core/errors.js";
import { memoOf, readLedger } from "./ledger.js";
import { levelOf, nodeOf, scopeChecks, type Level } from "./plan-view.js";
import { LineLimit } from "./line-limit.js";
import { readSpec } from "./spec.js";
import { oneAtATime, SETTABLE, updateStatus } from "./status.js";
import { id, statusSchema, taskListSchema, taskSchema, verdictSchema } from "./schemas.js";
import type { McpContext } from "./context.js";
import { verifyScope, type Verdict } from "./verify.js";
import { REINS_VERSION } from "../../base/config/package-info.js";

const version = REINS_VERSION;

/** What the server tells the agent on connecting: the workflow the tools make. */
const INSTRUCTIONS = `reins keeps the plan's tasks honest. list_tasks and get_task show the work (acceptance criteria, checks, spec sections); read_spec gives a spec section's text. Set a task in_progress when you start it, so its diff is taken from there. When you think it is done, call the verify tool of its level (verify_task_completion, verify_component_completion, verify_module_completion): reins runs the required checks itself and answers {passed, confidence, findings, summary} with the evidence. update_task_status(task, "complete") is rejected unless a verify of that task passed on the working tree as it is now: after any edit, verify again.`;

/** One line of an error for the agent: no line breaks, bounded. */
function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ").trim();
  return line.length > 2_000 ? `${line.slice(0, 2_000)}…` : line;
}

/** A tool's answer as an error result (`isError`), one line. */
function failure(error: unknown): CallToolResult {
  const text = ReinsError.is(error)
    ? error.message
    : `reins: internal error: ${error instanceof Error ? error.message : String(error)}`;
  return { isError: true, content: [{ type: "text", text: oneLine(text) }] };
}

/** Runs a tool's body; what it throws becomes an error result instead of a protocol error. */
async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    return failure(error);
  }
}

/** A structured answer, with its JSON as the text an agent reads. */
function structured(value: Record<string, unknown>, extra: string[] = []): CallToolResult {
  return {
    content: [
      { type: "text", text: JSON.stringify(value, null, 2) },
      ...extra.map((text) => ({ type: "text" as const, text })),
    ],
    structuredContent: value,
  };
}

/**
 * A verdict: the structured answer whole, and as text the JSON without the diff, then the diff as plain
 * text, for clients that show the text (Claude Code hands the model the structured content, as JSON).
 */
function verdictResult(verdict: Verdict): CallToolResult {
  const { diff, ...evidence } = verdict.evidence;
  const result = structured({ ...verdict, evidence: { ...evidence, diff: "(below)" } }, [
    diff === "" ? "no diff since the base" : `diff since ${verdict.evidence.base.slice(0, 12)}:\n${diff}`,
  ]);
  return { ...result, structuredContent: { ...verdict } };
}

/** Builds the MCP server of reins' tools over `ctx` (not yet connected to a transport). */
export function createReinsMcp(ctx: McpContext): McpServer {
  const server = new McpServer({ name: "reins", version }, { instructions: INSTRUCTIONS });
  const serial = oneAtATime();
  registerReadSpec(server, ctx);
  registerListTasks(server, ctx);
  registerGetTask(server, ctx);
  registerVerifyTools(server, ctx);
  registerUpdateStatus(server, ctx, serial);

  return server;
}

/** `read_spec`: one section of the spec, by its heading. */
function registerReadSpec(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    "read_spec",
    {
      title: "Read a spec section",
      description:
        "The text of one section of the specification the plan's tasks implement, found by its heading (as a task's spec sections name it), from the heading to the next heading of its level. Nothing more.",
      inputSchema: {
        section: z
          .string()
          .min(1, "section: give a heading")
          .max(1_000, "section: too long (a heading is at most 1000 characters)")
          .describe("the section's heading, e.g. as get_task lists it under spec.sections"),
        file: z
          .string()
          .max(1_000, "file: too long")
          .optional()
          .describe("the spec file, when the heading is in more than one"),
      },
      annotations: { readOnlyHint: true },
    },
    ({ section, file }) =>
      guarded(async () => {
        const found = await readSpec(ctx.root, ctx.plan(), section, file);
        return { content: [{ type: "text", text: found.text }] };
      }),
  );
}

/** `list_tasks`: every node of the plan, in plan order, with its status. */
function registerListTasks(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    "list_tasks",
    {
      title: "List the plan's tasks",
      description:
        "Every node of the plan (modules, components, tasks, subtasks) in plan order: id, kind, title, status (pending, in_progress, complete, failed, canceled), parent, deps and children.",
      outputSchema: taskListSchema,
      annotations: { readOnlyHint: true },
    },
    () =>
      guarded(async () => {
        const view = ctx.plan();
        const ledger = await readLedger(ctx.store, view.scope);
        const tasks = view.order.flatMap((nodeId) => {
          const node = own(view.nodes, nodeId);
          if (node === undefined) return [];
          return [
            {
              id: node.id,
              kind: node.kind,
              title: node.title,
              status: memoOf(ledger, node.id).status,
              parent: node.parent,
              deps: node.deps,
              children: node.children,
            },
          ];
        });
        return structured({ plan: view.name, tasks });
      }),
  );
}

/** `get_task`: everything about one node of the plan, its checks and its last verify. */
function registerGetTask(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    "get_task",
    {
      title: "Get one task",
      description:
        "Everything about one node of the plan: title, kind, status, deps, acceptance criteria, the checks its verify runs (with their commands), the spec sections it implements, its diff's base and its last verify.",
      inputSchema: { task: id("task") },
      outputSchema: taskSchema,
      annotations: { readOnlyHint: true },
    },
    ({ task }) =>
      guarded(async () => {
        const view = ctx.plan();
        const node = nodeOf(view, task);
        const memo = memoOf(await readLedger(ctx.store, view.scope), node.id);
        return structured({
          id: node.id,
          kind: node.kind,
          title: node.title,
          status: memo.status,
          parent: node.parent,
          deps: node.deps,
          children: node.children,
          priority: node.priority,
          type: node.type ?? null,
          acceptance: node.acceptance,
          ownChecks: node.checks,
          checks: scopeChecks(view, node.id).map((c) => ({ name: c.name, tier: c.tier, command: c.command })),
          verifyWith: `verify_${levelOf(node.kind)}_completion`,
          spec: node.spec ?? null,
          base: memo.base,
          lastVerify:
            memo.verify === null
              ? null
              : {
                  passed: memo.verify.passed,
                  at: new Date(memo.verify.at).toISOString(),
                  fingerprint: memo.verify.fingerprint,
                },
        });
      }),
  );
}

/** `verify_task_completion`, `verify_component_completion` and `verify_module_completion`: reins runs the checks and answers the verdict. */
function registerVerifyTools(server: McpServer, ctx: McpContext): void {
  const verifyTool = (level: Level, field: "task" | "component" | "module", what: string) =>
    server.registerTool(
      `verify_${level}_completion`,
      {
        title: `Verify a ${level}`,
        description: `Runs the checks ${what} requires (reins runs them in the project; their commands are in get_task) and collects the evidence: the diff since it began, each check's result, its acceptance criteria and the files changed. Answers {passed, confidence, findings, summary, evidence}: passed only when every check passed; findings are the failing checks with their output's tail. When the project enables the oracle, a reviewer model then judges the diff against the acceptance criteria and may veto (its reasons are findings); it never passes what the checks failed. A passing verify lets update_task_status(${field}, "complete") through until the working tree changes.`,
        inputSchema: { [field]: id(field) },
        outputSchema: verdictSchema,
      },
      (args, extra) =>
        guarded(async () => {
          const target = (args as Record<string, string>)[field] ?? "";
          const token = extra._meta?.progressToken;
          const verdict = await verifyScope(ctx, level, target, {
            signal: extra.signal,
            ...(token === undefined
              ? {}
              : {
                  progress: (done, total, check) =>
                    void extra
                      .sendNotification({
                        method: "notifications/progress",
                        params: { progressToken: token, progress: done, total, message: `running ${check}` },
                      })
                      .catch(() => undefined),
                }),
          });
          return verdictResult(verdict);
        }),
    );
  verifyTool("task", "task", "a task (or subtask) and its ancestors name, and every fast check of the plan,");
  verifyTool("component", "component", "a component and everything under it name, and every fast check,");
  verifyTool("module", "module", "a module and everything under it name, and every fast check,");
}

/** `update_task_status`: a node's status set, "complete" only after a verify passed on the tree as it is. */
function registerUpdateStatus(
  server: McpServer,
  ctx: McpContext,
  serial: ReturnType<typeof oneAtATime>,
): void {
  server.registerTool(
    "update_task_status",
    {
      title: "Set a task's status",
      description: `Sets a node's status: ${SETTABLE.join(", ")} (every node starts pending; set in_progress to start or reopen one). "complete" is rejected, with the reason, unless the node's verify (verify_task_completion for a task) passed after its last edit, on the working tree as it is now.`,
      inputSchema: {
        task: id("task"),
        status: z.enum(SETTABLE).describe(`the new status: ${SETTABLE.join(", ")}`),
      },
      outputSchema: statusSchema,
    },
    ({ task, status }) =>
      guarded(async () => {
        // One change at a time: each reads the statuses the one before it wrote.
        const change = await serial(() => updateStatus(ctx, task, status));
        return structured({ ...change });
      }),
  );
}

/** The largest request line `reins mcp` reads: well under the SDK transport's 10 MB, far over any tool's input. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** Serves reins' tools on stdin and stdout; resolves when the client goes away (stdin ends or closes). */
export async function serveStdio(ctx: McpContext): Promise<void> {
  const server = createReinsMcp(ctx);
  // A request over the limit is answered with an error and the server reads on (see LineLimit).
  const lines = process.stdin.pipe(
    new LineLimit(MAX_REQUEST_BYTES, (id, bytes) =>
      process.stdout.write(
        `${JSON.stringify({
          jsonrpc: "2.0",
          id,
          error: {
            code: -32600,
            message: `a request of ${bytes} bytes is over reins mcp's limit of ${MAX_REQUEST_BYTES} bytes: send less (a task id, a section's heading)`,
          },
        })}\n`,
      ),
    ),
  );
  const transport = new StdioServerTransport(lines, process.stdout);
  const closed = new Promise<void>((done) => {
    server.server.onclose = () => done();
  });
  const stop = () => void server.close().catch(() => undefined);
  process.stdin.once("end", stop);
  process.stdin.once("close", stop);
  await server.connect(transport);
  await closed;
}
