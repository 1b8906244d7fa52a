/** The self-protection guard: denies calls on reins' own files or acting as a person, unless allowed. */
import { deny, pass, quote, type Guard } from "../guard.js";
import { memoize } from "../memo.js";
import { NO_ITEMS } from "../empty.js";

const name = "self-protection";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Files that are reins' own, or that decide whether reins runs: its folder (tokens, database, spool, policy
 * cache), the policy file, and the agents' settings that hold reins' hooks and trust. By path segments, so
 * an absolute path (`/home/me/app/.reins/reins.db`) and a relative one match alike.
 */
export function isProtectedPath(path: string): boolean {
  const parts = path
    .replace(/\\/g, "/")
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  const last = parts[parts.length - 1] ?? "";
  const parent = parts[parts.length - 2] ?? "";
  if (parts.includes(".reins")) return true;
  if (last === "reins.config.json") return true;
  if (parent === ".claude" && /^settings(\.local)?\.json$/.test(last)) return true;
  if (parent === ".codex" && (last === "hooks.json" || last === "config.toml")) return true;
  return parent === ".gemini" && (last === "settings.json" || last === "trustedFolders.json");
}

/**
 * reins' secrets, as a path in a command: whoever reads the people's token can act as a person through the
 * API; the agents' token and the hook secret let it send the hooks' events itself (a check it never ran,
 * reported as passing).
 */
const SECRET = /(?:^|[/\s"'=])\.reins\/(?:api-token|agent-token|hook-secret)\b/;

/** reins' own program, as a command names it: `reins`, `npx reins`, `node bin/reins.js`. */
const REINS = /(?:^|\/)reins(?:\.js)?$/;
/** reins' options that take a value, before its command. */
const GLOBAL_OPTIONS = new Set(["-C", "--cwd", "--policy", "--store"]);
/** The HTTP API's human actions. */
const HUMAN_API =
  /\/api\/(?:(?:budgets|circuits)\/[^\s/]+\/(?:extend|reset|acknowledge)|alerts\/[^\s/]+\/acknowledge)\b/;

/** Whether a reins command line (its words after `reins`) is a person's action. */
function personAction(args: readonly string[]): boolean {
  let at = 0;
  while (GLOBAL_OPTIONS.has(args[at] ?? "")) at += 2;
  const [command = "", sub = ""] = args.slice(at);
  const rest = args.slice(at + 1);
  return (
    (command === "budget" && (sub === "extend" || sub === "reset")) ||
    (command === "circuit" && (sub === "ack" || sub === "reset")) ||
    command === "confirm" ||
    command === "approve" ||
    (command === "alerts" && rest.includes("--ack")) ||
    (command === "init" && rest.includes("--uninstall"))
  );
}

/**
 * Whether a shell command acts as a person: runs one of reins' human actions, or calls the API's. One pass
 * over its words, simple command by simple command (`;`, `&&`, `||`, `|`, newlines): the agent writes the
 * command, so nothing here may take more than linear time on it.
 */
function actsAsPerson(command: string): boolean {
  if (HUMAN_API.test(command)) return true;
  for (const part of command.split(/[;&|\n]+/)) {
    const words = part
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/^["']+|["']+$/g, ""));
    const at = words.findIndex((w) => REINS.test(w));
    if (at >= 0 && personAction(words.slice(at + 1))) return true;
  }
  return false;
}

// The same paths and commands come back on most calls of a session: each is judged once.
const isProtected = memoize(isProtectedPath);
const isToken = memoize((path) =>
  /\.reins\/(?:api-token|agent-token|hook-secret)$/.test(path.replace(/\\/g, "/")),
);
/** What a command does to reins, judged once per command: names a secret (2), acts as a person (1), neither (0). */
const commandRisk = memoize((command) => (SECRET.test(command) ? 2 : actsAsPerson(command) ? 1 : 0));

/**
 * The threat model's rule (README, "Security"): the guarded agent runs as the same user in the same
 * project, so reins cannot stop it by permissions; it stops it at the hook. A tool call that writes,
 * removes or moves reins' own files or the hooks' settings, or that runs a person's action (extending a
 * budget, resetting or acknowledging a breaker, confirming), is denied, unless a person has allowed one
 * such call with `reins confirm`. A deny: the agent goes on with its work, not with this.
 */
export const selfProtection: Guard = {
  name,
  order: 90,
  category: "tool-discipline",
  shortCircuit: true,
  grades: ["deny"],
  answers: ["tool.requested"],
  evaluate(state, event, policy) {
    if (event.kind !== "tool.requested" || !policy.protection.enabled) return passed;
    const path =
      (event.writes ?? NO_ITEMS).find(isProtected) ?? (event.removes ?? NO_ITEMS).find(isProtected);
    const command = event.command ?? "";
    const risk = commandRisk(command);
    const token = (event.reads ?? NO_ITEMS).some(isToken) || risk === 2;
    const acting = path === undefined && (token || risk === 1);
    if (path === undefined && !acting) return passed;
    if (state.protectionGrants > 0)
      return { guard: name, grade: "allow", effects: [{ kind: "protection.used" }] };
    const what =
      path !== undefined
        ? `${quote(path)} belongs to reins (its state, its policy, or the hooks that run it): an agent may not change, move or remove it`
        : token
          ? "reins' secrets (.reins/api-token, agent-token, hook-secret) let whoever holds them act as a person or speak as reins' hooks: an agent may not read them"
          : `${quote(command)} acts as a person (extending a budget, resetting or acknowledging a breaker, confirming): an agent may not`;
    return deny(
      name,
      `${what}. Leave it; if a person wants this done, they allow one such call with \`reins confirm ${state.scope} --reason "..."\`.`,
    );
  },
};
