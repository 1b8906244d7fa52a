/** The API's shapes, taken from the server's own types so the two cannot drift apart. */
export type { LogRecord, StoredAlert } from "../../src/base/core/batch.js";
export type { Decision } from "../../src/base/core/decision.js";
export type { ReinsEvent } from "../../src/base/core/reins-event.js";
export type { BudgetLine, BudgetStatus, ScopeSummary } from "../../src/base/core/summary.js";
export type { Overview, SpendSeries } from "../../src/server/web.js";
export type { StoredRun } from "../../src/base/core/store.js";
export type { ProofClause, TaskStatus } from "../../src/run/control/types.js";
export type { RunCheckView, RunNodeView, RunView } from "../../src/server/run-view.js";

import type { ScopeSummary } from "../../src/base/core/summary.js";

/** A budget or session as listed: its summary and how many of its alerts are open. */
export type ScopeView = ScopeSummary & { openAlerts: number };

/** A circuit breaker as the API lists it. */
export type Circuit = { id: string; agent: string; lastAt: number | null } & ScopeSummary["breaker"];

/** One page of a list. */
export interface Page<T> {
  total: number;
  offset: number;
  limit: number;
  items: T[];
}
export type { AllStatus } from "../../src/guard/daemon/all-status.js";
export type { ProjectView } from "../../src/guard/people/project-view.js";
