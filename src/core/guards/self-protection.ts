import { block, pass, quote, type Guard } from "../guard.js";

const name = "self-protection";

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

/** The people's token: whoever reads it can act as a person through the API. */
const PEOPLE_TOKEN = /(?:^|[/\s"'=])\.reins\/api-token\b|\bapi-token\b/;

/** A command that acts as a person: reins' human actions, or its HTTP API's. */
const HUMAN_ACTION = [
  /\breins(?:\.js)?["']?\s+(?:(?:-C|--cwd|--policy|--store)\s+\S+\s+)*(?:budget\s+(?:extend|reset)|circuit\s+(?:ack|reset)|confirm)\b/,
  /\breins(?:\.js)?["']?\s+(?:\S+\s+)*alerts\b.*--ack\b/,
  /\breins(?:\.js)?["']?\s+(?:\S+\s+)*init\b.*--uninstall\b/,
  /\/api\/(?:budgets|circuits)\/[^\s/]+\/(?:extend|reset|acknowledge)\b/,
  /\/api\/alerts\/[^\s/]+\/acknowledge\b/,
];

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
  evaluate(state, event, policy) {
    if (event.kind !== "tool.requested" || !policy.protection.enabled) return pass(name);
    const path = [...(event.writes ?? []), ...(event.removes ?? [])].find(isProtectedPath);
    const command = event.command ?? "";
    const token =
      (event.reads ?? []).some((p) => p.replace(/\\/g, "/").endsWith(".reins/api-token")) ||
      PEOPLE_TOKEN.test(command);
    const acting = path === undefined && (token || HUMAN_ACTION.some((pattern) => pattern.test(command)));
    if (path === undefined && !acting) return pass(name);
    if (state.protectionGrants > 0)
      return { guard: name, verdict: "allow", effects: [{ kind: "protection.used" }] };
    const what =
      path !== undefined
        ? `${quote(path)} belongs to reins (its state, its policy, or the hooks that run it): an agent may not change, move or remove it`
        : token
          ? "The people's API token (.reins/api-token) lets whoever holds it act as a person: an agent may not read it"
          : `${quote(command)} acts as a person (extending a budget, resetting or acknowledging a breaker, confirming): an agent may not`;
    return block(
      name,
      `${what}. Leave it; if a person wants this done, they allow one such call with \`reins confirm ${state.scope} --reason "..."\`.`,
    );
  },
};
