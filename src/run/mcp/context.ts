/** What the MCP tools share (the project, its store, the plan) and what a verify reports as wrong. */
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import type { review } from "../oracle/review.js";
import type { PlanView } from "./plan-view.js";

/** What the tools share: the project, its store, the plan scope's policy and the plan. */
export interface McpContext {
  /** The project's folder: checks run and git looks here. */
  root: string;
  store: Store;
  /** The plan scope's policy (ledger.ts `planPolicy`). */
  policy: Policy;
  /** The plan, read again when its file changes; throws a ReinsError when there is none. */
  plan: () => PlanView;
  /** Epoch ms. @default Date.now */
  now?: () => number;
  /** The reviewer, when `policy.oracle.enabled`. @default review (src/run/oracle/review.ts) */
  review?: typeof review;
}

/** Something a verify found wrong: a red check with its output's tail, or why the verdict cannot stand. */
export interface Finding {
  /** The check, or null for a finding about the verify itself (no checks, the tree changed). */
  check: string | null;
  message: string;
  failedTests: string[];
  /** The tail of the check's output. */
  output: string;
}
