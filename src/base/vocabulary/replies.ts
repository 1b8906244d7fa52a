/** The adapter kit's replies: the answer that decides a reply, and what it asks of the agent. */
import type { Answer } from "../core/batch.js";

/*
 * The adapter kit: what every agent adapter does the same way, whatever its protocol. Each adapter keeps
 * only its field names and reply forms.
 */

/** The answer that decides a reply: the most severe one, a person's confirmation breaking a tie. */
export function worstAnswer(answers: readonly Answer[]): NonNullable<Answer> | null {
  const rank = { allow: 0, warn: 1, block: 2 } as const;
  let found: NonNullable<Answer> | null = null;
  for (const a of answers) {
    if (a === null) continue;
    if (
      found === null ||
      rank[a.verdict] > rank[found.verdict] ||
      (a.verdict === found.verdict && a.needsHuman && !found.needsHuman)
    )
      found = a;
  }
  return found;
}

/** What reins tells the agent for an answer: its corrective instructions. */
export function reasonOf(answer: NonNullable<Answer>): string {
  return `reins: ${answer.instructions.join(" ")}`;
}

/**
 * What an answer asks of the agent's reply: nothing (allow), `deny` (block), `ask` (a person must confirm;
 * an agent without an ask form denies), or `note` (a warning for the model), with the reason. A deny's or an
 * ask's reason ends with the shell's `notices("deny")` (a config that did not load, reins not contained).
 */
export function verdictOf(
  answer: Answer | undefined,
  notices?: (when: "deny") => readonly string[],
): { form: "deny" | "ask" | "note"; reason: string } | null {
  if (answer === null || answer === undefined || answer.verdict === "allow") return null;
  const reason = reasonOf(answer);
  const form = answer.verdict === "block" ? "deny" : answer.needsHuman ? "ask" : "note";
  if (form === "note") return { form, reason };
  const lines = notices?.("deny") ?? [];
  return { form, reason: lines.length === 0 ? reason : `${reason} ${lines.join(" ")}` };
}

/** The `hookSpecificOutput.additionalContext` reply that Claude Code, Codex CLI and Gemini CLI all read. */
export function contextReply(hookEventName: string, additionalContext: string): object {
  return { hookSpecificOutput: { hookEventName, additionalContext } };
}
