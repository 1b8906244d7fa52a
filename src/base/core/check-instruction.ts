/** How an instruction names the way to run a check: its command as last seen or configured, else in words. */
import { clip, own } from "./capped.js";
import { quote } from "./guard.js";
import type { Policy } from "./policy.js";
import type { State } from "./state.js";

/** The checks reins recognises in any project, in words, for an instruction with no command to name. */
const KNOWN_CHECKS: Record<string, string> = {
  tests: "the project's tests",
  lint: "the project's linter",
  build: "the project's build",
  typecheck: "the project's type check",
};

/**
 * How to run a check, for an instruction: the command last seen running it, else the project's own command
 * (the policy's `completion.commands`, filled from the project's files), quoted; else the check in words.
 */
export function checkInstruction(state: State, check: string, policy: Policy): string {
  // `clip` marks inherited names, so a clipped key never reads the prototype.
  const command = state.checks[clip(check)]?.command ?? own(policy.completion.commands, check);
  return command !== undefined ? quote(command) : (KNOWN_CHECKS[check] ?? `the ${check} verification`);
}
