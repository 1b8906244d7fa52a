/** The hook events reins answers, per agent: which take a tool matcher, their timeouts, and the agent's hook settings file. */
/**
 * Per agent: the hook events reins answers (whether they take a tool matcher, and a timeout of their own),
 * and the timeout in the agent's unit.
 */
export const AGENT_HOOKS: Record<
  string,
  {
    events: [string, boolean, number?][];
    timeout: number;
    file: string[];
    /** The file lists each event's entries themselves (`{type, bash, timeoutSec}`), not matcher groups. */
    flat?: true;
  }
> = {
  claude: {
    events: [
      ["SessionStart", false],
      ["UserPromptSubmit", false],
      ["PreToolUse", true],
      ["PostToolUse", true],
      ["PostToolUseFailure", true],
      ["Stop", false],
      ["SubagentStop", false],
      ["SessionEnd", false],
    ],
    timeout: 30,
    file: [".claude", "settings.json"],
  },
  codex: {
    events: [
      ["SessionStart", false],
      ["UserPromptSubmit", false],
      ["PreToolUse", true],
      ["PostToolUse", true],
      ["Stop", false],
      ["SessionEnd", false, 3], // Codex caps a SessionEnd hook at 3 s (and says so on every run when asked for more)
    ],
    timeout: 30,
    file: [".codex", "hooks.json"],
  },
  gemini: {
    events: [
      ["SessionStart", false],
      ["BeforeAgent", false],
      ["BeforeTool", true],
      ["AfterTool", true],
      ["AfterModel", false],
      ["AfterAgent", false],
      ["SessionEnd", false],
    ],
    timeout: 30_000, // Gemini CLI counts hook timeouts in milliseconds
    file: [".gemini", "settings.json"],
  },
  qwen: {
    events: [
      ["SessionStart", false],
      ["UserPromptSubmit", false],
      ["PreToolUse", true],
      ["PostToolUse", true],
      ["PostToolUseFailure", true],
      ["Stop", false],
      ["SessionEnd", false],
    ],
    timeout: 30_000, // Qwen Code counts a command hook's timeout in milliseconds (its http hooks' in seconds)
    file: [".qwen", "settings.json"],
  },
  // Copilot CLI: camelCase events in a hooks file of reins' own, each entry `{type, bash, timeoutSec}`.
  copilot: {
    events: [
      ["sessionStart", false],
      ["userPromptSubmitted", false],
      ["preToolUse", false],
      ["postToolUse", false],
      ["postToolUseFailure", false],
      ["agentStop", false],
      ["sessionEnd", false],
    ],
    timeout: 30,
    file: [".github/hooks", "reins.json"],
    flat: true,
  },
};

/** The hook events reins installs for `agent`. */
export function hookEventsOf(agent: string): string[] {
  return (AGENT_HOOKS[agent]?.events ?? []).map(([event]) => event);
}

/**
 * Whether a Claude Code hook input opens a turn (SessionStart, UserPromptSubmit): only those wait for the
 * daemon, whose port the turn's tool calls post to; a tool call answered here needs no daemon after it.
 */
export function opensTurn(raw: Buffer | string): boolean {
  return /"hook_event_name"\s*:\s*"(SessionStart|UserPromptSubmit)"/.test(raw.toString());
}
