/** The built-in guards by name, and defaultGuards, the list the standard pipeline sorts. */
import type { Guard } from "../guard.js";
import { budget } from "./budget.js";
import { churn } from "./churn.js";
import { circuitBreaker } from "./circuit-breaker.js";
import { circular } from "./circular.js";
import { completionGate } from "./completion-gate.js";
import { loopPatterns } from "./loop-patterns.js";
import { maxIterations } from "./max-iterations.js";
import { pricing } from "./pricing.js";
import { qualityRegression } from "./quality-regression.js";
import { selfProtection } from "./self-protection.js";
import { spendRate } from "./spend-rate.js";
import { thrashing } from "./thrashing.js";
import { toolDiscipline } from "./tool-discipline.js";
import { verificationGate } from "./verification-gate.js";
import { wipLimits } from "./wip-limits.js";

export {
  budget,
  churn,
  circuitBreaker,
  circular,
  completionGate,
  loopPatterns,
  maxIterations,
  pricing,
  qualityRegression,
  selfProtection,
  spendRate,
  thrashing,
  toolDiscipline,
  verificationGate,
  wipLimits,
};

/** Every built-in guard; `pipeline()` puts them in evaluation order. */
export const defaultGuards: readonly Guard[] = [
  selfProtection,
  maxIterations,
  budget,
  pricing,
  spendRate,
  circuitBreaker,
  churn,
  circular,
  loopPatterns,
  verificationGate,
  completionGate,
  qualityRegression,
  thrashing,
  wipLimits,
  toolDiscipline,
];
