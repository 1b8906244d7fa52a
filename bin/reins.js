#!/usr/bin/env node
// CommonJS (bin/package.json): a CommonJS entry starts without Node's ES module loader, a few ms less on
// every hook command. The hot path (one call per agent tool call without the daemon) skips the CLI
// framework and the server: it requires only the bundled hook command.
const argv = process.argv.slice(2);
const hook = argv[0] === "hook" && argv.length >= 2 && !argv.includes("--help") && !argv.includes("-h");
const main =
  hook && argv.length === 2 && !argv[1].startsWith("-")
    ? require("../dist/hooks/startup/hook-loader.cjs").hookMain(argv[1])
    : import("../dist/cli/run.js").then((cli) => cli.run(argv));
main.then((code) => {
  process.exitCode = code;
  // A hook has answered once its reply is written (stdout and stderr are synchronous pipes on Linux):
  // nothing left behind (a store connection closing, a keep-alive socket) may keep the agent waiting.
  if (hook) process.exit(code);
});
