#!/usr/bin/env node
// CommonJS (bin/package.json): a CommonJS entry starts without Node's ES module loader, a few ms less on
// every hook command. The hot path (one call per agent tool call when no daemon answers) skips the CLI
// framework and the server: it requires only the bundled hook command.
const argv = process.argv.slice(2);
const hook = argv[0] === "hook" && argv.length >= 2 && !argv.includes("--help") && !argv.includes("-h");
// `hook <agent>`, or `hook <agent> --start-daemon <name>` as the hook clients run it when no daemon answers
// (`--unproven <name>` when something answered without the daemon's proof).
const fast =
  hook &&
  !argv[1].startsWith("-") &&
  (argv.length === 2 ||
    (argv.length === 4 &&
      (argv[2] === "--start-daemon" || argv[2] === "--unproven") &&
      !argv[3].startsWith("-")));
// `daemon run [--name <name>]`: the long-lived hook daemon holds only what answering hooks needs.
const daemon =
  argv[0] === "daemon" &&
  argv[1] === "run" &&
  (argv.length === 2 || (argv.length === 4 && argv[2] === "--name"));
// `statusline [--compose <base64>]`: Claude Code runs it on every render of its status line.
const statusline = argv[0] === "statusline" && !argv.includes("--help") && !argv.includes("-h");
// `status …` and `doctor …`, typed by people and run by scripts: one bundled, code-cached file holds them.
const quick = argv[0] === "status" || argv[0] === "doctor";
const main = statusline
  ? import("../dist/cli/statusline.js").then((s) => s.statuslineMain(argv.slice(1)))
  : fast
    ? require("../dist/hook-entry/hook-loader.cjs").hookMain(argv[1], argv[3], argv[2] === "--unproven")
    : daemon
      ? import("../dist/guard/daemon/run.js").then((d) =>
          d.runDaemon(argv[3], process.env, (line) => process.stderr.write(`${line}\n`)),
        )
      : quick
        ? require("../dist/hook-entry/quick-loader.cjs").quickMain(argv)
        : import("../dist/cli/run.js").then((cli) => cli.run(argv));
main.then((code) => {
  process.exitCode = code;
  // A hook has answered once its reply is written (stdout and stderr are synchronous pipes on Linux):
  // nothing left behind (a store connection closing, a keep-alive socket) may keep the agent waiting.
  if (hook) process.exit(code);
});
