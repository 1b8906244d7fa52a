/** The contract every agent CLI's hook adapter fulfils: how it reads its input and plans its reply. */
import type * as z from "zod";
import type { Answer } from "../../base/core/batch.js";
import type { EventInput } from "../../base/core/reins-event.js";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import type { UsageReader } from "./transcript.js";

/**
 * The agent CLIs whose hooks reins answers, by the one name reins gives each everywhere: `reins init
 * <agent>`, `reins hook <agent>`, the `agent` of their `session.started` events and the metrics' `agent`
 * label.
 */
export const AGENT_NAMES = ["claude", "codex", "gemini", "qwen", "copilot", "opencode", "kilo"] as const;

/** The name of an agent CLI whose hooks reins answers. */
export type AgentName = (typeof AGENT_NAMES)[number];

/** What one hook call records, and how to turn the answers into the agent's reply. */
export interface HookPlan {
  scope: string;
  events: EventInput[];
  /** The agent's JSON reply, or null for "nothing to say" (allow). */
  reply(answers: Answer[], state: State | null): object | null;
  /**
   * Whether the call opens a turn (a session's start, a prompt) or closes one (a stop, a session's end): the
   * tamper check runs then (guard/hooks/tamper-check.ts), never on a tool call. @default neither
   */
  turn?: "open" | "close";
}

/** What a hook call is planned with, besides its input. */
export interface HookContext {
  policy: Policy;
  transcripts: UsageReader;
  /** The scope's state before this call, for events that depend on it (the previous prompt's task). */
  before: State | null;
  /**
   * What the shell must tell the model about guarding itself (not contained, tampering found, a bad config),
   * asked only when a reply needs it: `turn` at a session's start and each prompt, `deny` with every deny.
   * @default nothing to tell
   */
  notices?: Notices;
}

/** The lines about guarding itself that a reply carries: `turn` opens a turn, `deny` goes with a deny. */
export type Notices = (when: "turn" | "deny") => readonly string[];

/** One agent's hook protocol: how to read its input and how to answer it. */
export interface AgentAdapter<I = unknown> {
  name: AgentName;
  /** Checks the hook input; unknown fields are ignored. */
  input: z.ZodType<I>;
  /** The session id, scope of every event of the call. */
  session(input: I): string;
  /** The project folder the agent runs in, when the input says. */
  cwd(input: I): string | undefined;
  /**
   * The environment variables in which the agent gives its hooks the project it was started in, in order of
   * preference: only its own, since a hook of one agent may run inside another agent's session.
   */
  projectEnv: readonly string[];
  /** Whether the plan needs the scope's state before the call (a hook that closes the previous task). */
  needsState(input: I): boolean;
  /**
   * The transcript in which this call is owed a line of the model's reply that the agent may still be
   * writing when the hook comes: the call waits (briefly) for it before reading. @default none
   */
  owedReplyLine?(input: I): string | undefined;
  plan(input: I, ctx: HookContext): HookPlan;
}
