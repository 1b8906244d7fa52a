/** The run settings a plan file may give. */
import type { RunSettingsInput } from "../control/settings.js";

/**
 * Settings as a plan gives them: every field optional, down to one retry class or one bound of the
 * backoff, so a plan can set `retries.checks` alone. The shell fills in the defaults with the control
 * core's `resolveSettings` (src/run/control/settings.ts), after laying command-line flags over them.
 */
export type PlanSettings = RunSettingsInput;
