/** Claude Code hook inputs the daemon tests send: one failing command, asked for and then reported failed. */

/** A PreToolUse of `node migrate.js` in session `session` of the project at `root`. */
export const failing = (session: string, root: string) => ({
  session_id: session,
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "node migrate.js" },
  cwd: root,
});

/** The same call reported failed (PostToolUseFailure, exit code 1). */
export const failed = (session: string, root: string) => ({
  ...failing(session, root),
  hook_event_name: "PostToolUseFailure",
  error: "Exit code 1\nECONNREFUSED",
});
