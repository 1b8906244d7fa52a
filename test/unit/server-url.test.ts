import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHook } from "../../src/guard/hooks/hook-call.js";
import { Spool } from "../../src/base/store/spool.js";
import { startApi, type ApiServer } from "#test/api-server.js";

/**
 * A REINS_SERVER_URL with entries that name no server, through the hook as an agent calls it (in-process):
 * the bad entries are skipped and named once in the warning, the good ones still used, and with none usable
 * the hook fails closed when the policy says so and keeps the events in the spool.
 */

let api: ApiServer;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

/** A project on the agent's machine that fails closed without its store. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-server-url-"));
  writeFileSync(join(dir, "reins.config.json"), JSON.stringify({ failClosed: true }));
  return dir;
}

/** One Claude Code PreToolUse in `dir`'s session `session`, answered with REINS_SERVER_URL set to `url`. */
async function preToolUse(dir: string, session: string, url: string) {
  const input = {
    session_id: session,
    transcript_path: "",
    cwd: dir,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    tool_use_id: "call-1",
  };
  const env = { REINS_SERVER_URL: url, REINS_TOKEN: api.token, REINS_SERVER_TIMEOUT_MS: "2000" };
  const result = await runHook("claude", Buffer.from(JSON.stringify(input)), env, dir);
  const reply = result.reply as { hookSpecificOutput?: { permissionDecision?: string } } | null;
  return { decision: reply?.hookSpecificOutput?.permissionDecision ?? "allow", warning: result.warning };
}

/** How many times `text` holds `part`. */
const times = (text: string, part: string) => text.split(part).length - 1;

describe("REINS_SERVER_URL with entries that name no server", () => {
  it("skips a bad entry and still records on the good server listed after it", async () => {
    const dir = project();
    const answered = await preToolUse(dir, "url-good", `http://127.0.0.1:9,ftp://typo,${api.url}`);
    expect(answered.decision).toBe("allow");
    expect(answered.warning).not.toContain("without guarding");
    // The skipped entry is said once for this project and list, not on every call.
    expect(times(answered.warning, "ftp://typo")).toBe(1);
    const again = await preToolUse(dir, "url-good", `http://127.0.0.1:9,ftp://typo,${api.url}`);
    expect(again.warning).toBe("");
    expect((await api.services.store.state("session:url-good"))?.seq).toBe(2);
    expect(existsSync(join(dir, ".reins", "spool"))).toBe(false);
  });

  it.each([["ftp://typo"], ["http://[::1"], [" , "]])(
    "with only bad entries (%j) and failClosed, denies the call and spools its event",
    async (url) => {
      const dir = project();
      const { decision, warning } = await preToolUse(dir, "url-none", url);
      expect(decision).toBe("deny");
      expect(warning).toMatch(/^reins: store unavailable \(REINS_SERVER_URL names no usable server/);
      expect(warning).toContain("failClosed is set");
      expect(warning).not.toContain("without guarding");
      expect(warning).not.toContain("\n");
      expect(new Spool(join(dir, ".reins", "spool")).files()).toHaveLength(1);
      expect(await api.services.store.state("session:url-none")).toBeNull();
    },
  );

  it("names the bad entry once in the one warning line when the good one cannot be reached", async () => {
    const dir = project();
    const { decision, warning } = await preToolUse(dir, "url-down", "http://127.0.0.1:9,ftp://typo");
    expect(decision).toBe("deny");
    expect(times(warning, "ftp://typo")).toBe(1);
    expect(warning).toContain('skipped "ftp://typo" (not http or https)');
    expect(warning).toContain("http://127.0.0.1:9");
    expect(warning).not.toContain("\n");
    expect(new Spool(join(dir, ".reins", "spool")).files()).toHaveLength(1);
  });
});
