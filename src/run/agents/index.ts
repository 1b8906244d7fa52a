/** The agents `reins run` can drive, by the `--agent` spec that names them. */
import { ReinsError } from "../../base/core/errors.js";
import { claudeRunner, type ClaudeOptions } from "./claude.js";
import { codexRunner, type CodexOptions } from "./codex.js";
import { commandRunner } from "./command.js";
import { geminiRunner } from "./gemini.js";
import { copilotRunner } from "./copilot.js";
import { opencodeRunner } from "./opencode.js";
import type { AgentRunner } from "./runner.js";

export type { AgentOutcome, AgentParse, AgentRequest, AgentResult, AgentRunner } from "./runner.js";

/** Options for whichever agent the spec names; each takes the fields it knows (`cmd:` only the environment). */
export type RunnerOptions = ClaudeOptions & CodexOptions;

/** The agents `--agent` accepts, for messages. */
export const AGENT_CHOICES = "claude, codex, gemini, copilot, opencode or cmd:<command>";

/**
 * The runner for an `--agent` spec: `claude`, `codex`, `gemini` or `cmd:<command>`. Its `name` is the spec,
 * so a resumed or replayed run makes the same runner from its record. Anything else is a usage error.
 */
export function runnerFor(spec: string, options: RunnerOptions = {}): AgentRunner {
  if (spec === "claude") return claudeRunner(options);
  if (spec === "codex") return codexRunner(options);
  if (spec === "gemini") return geminiRunner(options);
  if (spec === "copilot") return copilotRunner(options);
  if (spec === "opencode") return opencodeRunner(options);
  if (spec.startsWith("cmd:") && spec.slice(4).trim() !== "") {
    return commandRunner(spec.slice(4), {
      ...(options.baseEnv ? { baseEnv: options.baseEnv } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
  }
  throw new ReinsError("usage", `unknown agent "${spec}": use ${AGENT_CHOICES}`);
}
