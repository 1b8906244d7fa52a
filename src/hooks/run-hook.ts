import { join } from "node:path";
import { ReinsError } from "../core/errors.js";
import { createGovernor } from "../governor.js";
import { findRoot, loadPolicy } from "../shell/config.js";
import { openStore } from "../store/open.js";
import { Spool } from "../store/spool.js";
import { claudeInput, planClaude } from "./claude.js";
import { TranscriptReader } from "./transcript.js";

/** Hook input larger than this is refused (allowed, with a warning): no agent sends that much. */
export const MAX_HOOK_INPUT = 16 * 1024 * 1024;

/** The agents whose hook protocols reins speaks. */
export const AGENTS = ["claude"] as const;
export type Agent = (typeof AGENTS)[number];

export interface HookResult {
  /** What to print on stdout: the agent's JSON reply, or "" for a plain allow. */
  stdout: string;
  /** One line for stderr when something went wrong, else "". */
  warning: string;
}

const allow = (warning: string): HookResult => ({ stdout: "", warning });

/**
 * Answers one hook call in-process: parse and check the input, record its events through the project's
 * store, reply in the agent's protocol. Never throws and never blocks by accident: any failure is an allow
 * with one line saying why.
 */
export async function runHook(
  agent: Agent,
  raw: Buffer,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<HookResult> {
  if (raw.length > MAX_HOOK_INPUT)
    return allow(
      `reins hook ${agent}: input of ${raw.length} bytes is over the ${MAX_HOOK_INPUT}-byte limit; allowed without guarding`,
    );
  const text = raw.toString("utf8").trim();
  if (text === "") return allow(`reins hook ${agent}: empty input on stdin; allowed without guarding`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return allow(`reins hook ${agent}: input is not JSON; allowed without guarding`);
  }
  const parsed = claudeInput.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return allow(
      `reins hook ${agent}: input is missing or has a bad ${issue?.path.join(".") || "value"} (${issue?.message ?? "invalid"}); allowed without guarding`,
    );
  }
  const input = parsed.data;
  try {
    const root = findRoot(input.cwd ?? env.CLAUDE_PROJECT_DIR ?? cwd);
    const { policy } = loadPolicy({ cwd: root, env });
    const store = await openStore(env.REINS_STORE ?? policy.store, root);
    try {
      const scope = `session:${input.session_id}`;
      const before = input.hook_event_name === "UserPromptSubmit" ? await store.state(scope) : null;
      const plan = planClaude(input, {
        policy,
        before,
        transcripts: new TranscriptReader(join(root, ".reins", "transcripts")),
      });
      const now = Date.now();
      const events = plan.events.map((e) => ({ ...e, at: now, scope: plan.scope }));
      let warning = "";
      const governor = createGovernor({
        store,
        policy,
        spool: new Spool(join(root, ".reins", "spool")),
        onWarning: (line) => (warning = line),
      });
      const { answers } = await governor.record(plan.scope, events);
      const state = await store.state(plan.scope).catch(() => null);
      const reply = plan.reply(answers, state);
      return { stdout: reply === null ? "" : JSON.stringify(reply), warning };
    } finally {
      await store.close();
    }
  } catch (error) {
    const message = ReinsError.is(error)
      ? error.message
      : error instanceof Error
        ? error.message
        : String(error);
    return allow(`reins hook ${agent}: ${message.split("\n")[0] ?? "failed"}; allowed without guarding`);
  }
}
