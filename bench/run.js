// `npm run bench`: prints each figure with its same-run baseline and the machine it was measured on.
import { boundaryBench } from "./boundary.js";
import { claudeHttpBench, walBench } from "./claude-http.js";
import { cliBench } from "./cli.js";
import { dashboardBench } from "./dashboard.js";
import { daemonRssBench } from "./daemon-rss.js";
import { efficacyBench } from "./efficacy.js";
import { engineBench } from "./engine.js";
import { hooksBench } from "./hooks.js";
import { projectsBench } from "./projects.js";
import { daemonSessionsBench, redisIdsBench, redisRetentionBench } from "./retention.js";
import { witnessBench } from "./witness.js";
import { serverBench } from "./server.js";
import { redisBench, sqliteBench, sqliteGcBench } from "./stores.js";
import { sqlitePagesBench } from "./sqlite-pages.js";
import { machine } from "./stats.js";

const rows = [];
function report(name, value, extra = {}) {
  rows.push({ name, value, ...extra });
  const details = Object.entries(extra)
    .map(([k, v]) => `\n    ${k}: ${v}`)
    .join("");
  console.log(`${name}: ${value}${details}`);
}

// `npm run bench -- hooks server` runs only the parts named.
const parts = {
  engine: engineBench,
  sqlite: sqliteBench,
  "sqlite-gc": sqliteGcBench,
  "sqlite-pages": sqlitePagesBench,
  redis: redisBench,
  "redis-retention": redisRetentionBench,
  "redis-ids": redisIdsBench,
  hooks: hooksBench,
  cli: cliBench,
  "claude-http": claudeHttpBench,
  wal: walBench,
  boundary: boundaryBench,
  projects: projectsBench,
  sessions: daemonSessionsBench,
  "daemon-rss": daemonRssBench,
  witness: witnessBench,
  server: serverBench,
  dashboard: dashboardBench,
  efficacy: efficacyBench,
};
// Names choose parts; `--flag value` pairs go to the parts (efficacy: `--corpus <dir> --outcomes <file>`).
const argv = process.argv.slice(2);
const options = argv.filter((a, i) => a.startsWith("--") || argv[i - 1]?.startsWith("--"));
const chosen = argv.filter((a) => !options.includes(a));
const unknown = chosen.filter((name) => !(name in parts));
if (unknown.length > 0) {
  console.error(`bench: unknown part ${unknown.join(", ")} (use ${Object.keys(parts).join(", ")})`);
  process.exit(2);
}

console.log(`machine: ${machine()}\n`);
for (const [name, bench] of Object.entries(parts)) {
  if (chosen.length === 0 || chosen.includes(name)) await bench(report, options);
}
