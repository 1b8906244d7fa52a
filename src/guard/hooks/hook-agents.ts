/** The hook adapters by agent name: claude, codex and gemini. */
import type { AgentAdapter } from "./agent-adapter.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { gemini } from "./gemini.js";
import { qwen } from "./qwen.js";
import { copilot } from "./copilot.js";
import { kilo, opencode } from "./opencode.js";

/** The agents whose hook protocols reins speaks, by name. */
export const HOOK_AGENTS: Record<string, AgentAdapter> = {
  claude,
  codex,
  gemini,
  qwen,
  copilot,
  opencode,
  kilo,
};

/** Their names. */
export const AGENTS = Object.keys(HOOK_AGENTS);
