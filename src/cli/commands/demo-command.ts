/** `reins demo`: scripted agents through the engine, then a scripted `reins run`, optionally served after. */
import { join } from "node:path";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "../../server/server-process.js";
import { openStore } from "../../base/store/open.js";
import { demoPlanRun } from "../../run/demo/plan-run.js";
import { demo, demoStartBefore } from "../demo.js";
import type { CommandContext } from "../context.js";
import { wrap } from "../../base/text/wrap.js";

/** Registers `reins demo`. */
export function registerDemoCommand(root: Command, ctx: CommandContext): void {
  const { io, result } = ctx;
  root
    .command("demo")
    .description("run scripted agents through the engine and show when and why reins steps in")
    .option("--agent <name>", "run one agent: healthy, stuck, alternating, thrashing, burst, red-claim")
    .option("--trace <file>", "also write every event and decision as a trace for `reins check`")
    .option("--serve", "then serve the dashboard on the demo's sessions (`reins serve`) until Ctrl-C")
    .option("--port <port>", "the port to serve on, with --serve", String(DEFAULT_PORT))
    .action(async (opts: { agent?: string; trace?: string; serve?: boolean; port: string }) => {
      const loaded = ctx.loaded();
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        // Minute-aligned times ending now: the sessions show as just done, and rate windows line up.
        const start = await demoStartBefore(Date.now(), loaded.policy);
        result.code = await demo(io, loaded.policy, {
          ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
          ...(opts.trace !== undefined ? { trace: opts.trace } : {}),
          start,
          run: Date.now().toString(36),
          backend: (scope) => async (event) => {
            const answer = (await store.append(scope, [event], loaded.policy)).answers[0];
            if (answer === null || answer === undefined)
              throw new ReinsError("invalid_event", "the demo's event was not applied");
            return answer;
          },
        });
        if (result.code === 0 && opts.agent === undefined) {
          // The other half: reins drives an agent over a plan, runs the checks itself, commits what is green.
          io.stdout("\nreins run: a scripted agent driven over a three-task plan, one task red first\n\n");
          // Each line wrapped at word boundaries (the done proof's clauses make a long one).
          const width = Math.max(60, io.columns ?? 100) - 2;
          const said = (text: string) =>
            text
              .split("\n")
              .map((line) => (line === "" ? line : `  ${wrap(line, width, "    ")}`))
              .join("\n");
          const ran = await demoPlanRun(store, loaded.policy, (text) => io.stdout(said(text)));
          const done = Object.values(ran.state.tasks).filter((t) => t.status === "done").length;
          io.stdout(
            `\n${said(`${done} of ${Object.keys(ran.state.tasks).length} tasks done, one commit each, on branch ${ran.meta.branch} of ${ran.root}; report: ${join(ran.root, ran.report ?? "")}`)}\n`,
          );
        }
        if (result.code === 0)
          io.stdout(
            opts.serve === true
              ? `\nThe demo's sessions are in ${store.location}; the dashboard: http://${DEFAULT_HOST}:${opts.port}/ (Ctrl-C stops it)\n`
              : `\nThe demo's sessions are in ${store.location}: see them with \`reins status\`.\n`,
          );
      } finally {
        await store.close();
      }
      if (result.code !== 0 || opts.serve !== true) return;
      // The same project, policy and store, served until Ctrl-C: the dashboard shows what just ran.
      const global = root.opts<{ cwd: string; policy?: string; store?: string }>();
      result.code = await ctx.run(
        [
          "-C",
          global.cwd,
          ...(global.policy !== undefined ? ["--policy", global.policy] : []),
          ...(global.store !== undefined ? ["--store", global.store] : []),
          "serve",
          "--port",
          opts.port,
        ],
        io,
      );
    });
}
