/** The shape of a source of notices: what the shell tells the model about guarding itself (guard/hooks/notices.ts). */
import type { AgentName } from "./agent-adapter.js";

/** The notices of a project for one agent's reply: `turn` opens a turn, `deny` goes with a deny. */
export type ProjectNotices = (when: "turn" | "deny", agent: AgentName) => readonly string[];

/** One source of notices for a project's hook replies (most ignore the agent). */
export type NoticeSource = ProjectNotices;
