/** The zod schemas of reins' MCP tools: a node id argument and the tools' structured answers. */
import * as z from "zod";

/** A node id argument; each limit's message is the line the agent reads. */
export const id = (what: string) =>
  z
    .string()
    .min(1, `${what}: give an id`)
    .max(256, `${what}: too long (ids are at most 64 characters)`)
    .describe(`the ${what}'s id in the plan (see list_tasks)`);

const taskRow = z.object({
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  status: z.string(),
  parent: z.string().nullable(),
  deps: z.array(z.string()),
  children: z.array(z.string()),
});

const checkRow = z.object({ name: z.string(), tier: z.string(), command: z.string() });

/** list_tasks' answer. */
export const taskListSchema = { plan: z.string(), tasks: z.array(taskRow) };

/** get_task's answer. */
export const taskSchema = {
  ...taskRow.shape,
  priority: z.number(),
  type: z.string().nullable(),
  acceptance: z.array(z.string()),
  ownChecks: z.array(z.string()),
  checks: z.array(checkRow),
  verifyWith: z.string(),
  spec: z.object({ file: z.string(), sections: z.array(z.string()) }).nullable(),
  base: z.string().nullable(),
  lastVerify: z
    .object({ passed: z.boolean(), at: z.string(), fingerprint: z.string().nullable() })
    .nullable(),
};

/** A verify's answer (verify.ts Verdict). */
export const verdictSchema = {
  passed: z.boolean(),
  confidence: z.number(),
  findings: z.array(
    z.object({
      check: z.string().nullable(),
      message: z.string(),
      failedTests: z.array(z.string()),
      output: z.string(),
    }),
  ),
  summary: z.string(),
  evidence: z.object({
    scope: z.object({ level: z.string(), id: z.string(), kind: z.string(), title: z.string() }),
    acceptance: z.array(z.string()),
    checks: z.array(
      checkRow.extend({
        passed: z.boolean(),
        exitCode: z.number().nullable(),
        failedTests: z.array(z.string()),
        durationMs: z.number(),
      }),
    ),
    base: z.string(),
    baseFrom: z.string(),
    filesChanged: z.array(z.string()),
    linesChanged: z.number(),
    diff: z.string(),
    fingerprint: z.string(),
    advice: z.array(z.string()),
  }),
  /** The oracle's review (verify.ts OracleReport); null when it is off or was not asked. */
  oracle: z
    .object({
      reviewer: z.string(),
      outcome: z.enum(["approved", "vetoed", "failed"]),
      confidence: z.number().nullable(),
      summary: z.string(),
    })
    .nullable(),
};

/** update_task_status' answer (status.ts StatusChange). */
export const statusSchema = {
  task: z.string(),
  status: z.string(),
  previous: z.string(),
  note: z.string(),
  advice: z.array(z.string()),
};
