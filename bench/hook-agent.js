// One agent of the projects bench, in a process of its own as an agent CLI is: it runs the hook client for
// each of its hook calls and waits for it, a tool call every `pace` ms, and prints each call's wall time (ns)
// as JSON. Usage: node hook-agent.js <spec.json>
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const times = [];
await new Promise((r) => setTimeout(r, spec.delay));
for (const [i, body] of spec.inputs.entries()) {
  const t0 = process.hrtime.bigint();
  const ran = spawnSync(spec.client, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    input: JSON.stringify(body),
  });
  times.push(Number(process.hrtime.bigint() - t0));
  if (ran.status !== 0) throw new Error(`client exited ${ran.status}: ${ran.stderr}`);
  if (spec.pace > 0 && i % 2 === 1) await new Promise((r) => setTimeout(r, spec.pace));
}
process.stdout.write(JSON.stringify(times));
