// `npm run bench`: prints each figure with its same-run baseline and the machine it was measured on.
import { engineBench } from "./engine.js";
import { hooksBench } from "./hooks.js";
import { serverBench } from "./server.js";
import { redisBench, sqliteBench } from "./stores.js";
import { machine } from "./stats.js";

const rows = [];
function report(name, value, extra = {}) {
  rows.push({ name, value, ...extra });
  const details = Object.entries(extra)
    .map(([k, v]) => `\n    ${k}: ${v}`)
    .join("");
  console.log(`${name}: ${value}${details}`);
}

console.log(`machine: ${machine()}\n`);
engineBench(report);
await sqliteBench(report);
await redisBench(report);
await hooksBench(report);
await serverBench(report);
