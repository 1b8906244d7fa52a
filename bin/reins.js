#!/usr/bin/env node
const argv = process.argv.slice(2);
// The hot path (one call per agent tool call without the daemon) skips the CLI framework and the server.
const hook = argv.length === 2 && argv[0] === "hook";
const main = hook
  ? (await import("../dist/hooks/hook-bundle.js")).hookMain(argv[1])
  : (await import("../dist/cli/run.js")).run(argv);
process.exitCode = await main;
