/** The agent names the SDK adapters record in `session.started`, which the metrics' `agent` label knows. */

/** One name per SDK adapter, as its entry point is named (`reins/claude-agent-sdk`, `reins/ai-sdk`...). */
export const SDK_AGENT_NAMES = ["claude-agent-sdk", "openai-agents", "ai-sdk", "copilot-sdk"] as const;

/** The name an SDK adapter records. */
export type SdkAgentName = (typeof SDK_AGENT_NAMES)[number];
