import { join } from "node:path";
import { readFileSync, readdirSync } from "node:fs";
import { it } from "vitest";
import { e2eProject, npmTestPackage, recorded } from "./support/e2e-project.js";
import { startFakeChat, toolResults, userTexts } from "./support/fake-chat.js";
import { runOpencode } from "./support/opencode-cli.js";
import { cleanEnv, runReins, stopHookDaemons } from "./support/processes.js";
import { SqliteStore } from "../src/store/sqlite.js";
it("debug", async () => {
  const { root, project, home } = e2eProject("dbg", { "package.json": npmTestPackage(), "test.js": "console.log('Tests: 1 passed, 1 total');\n" });
  const init = runReins(["init", "opencode"], { cwd: project, env: cleanEnv(home) });
  console.log(init.stdout, init.stderr);
  const fake = await startFakeChat([
    { toolCalls: [{ name: "write", arguments: { filePath: join(project, "app.js"), content: "x\n" } }] },
    { text: "Done." },
    { toolCalls: [{ name: "bash", arguments: { command: "npm test", description: "t" } }] },
    { text: "All tests pass." },
  ]);
  const r = await runOpencode({ agent: "opencode", cwd: project, home, prompt: "Do it.", baseUrl: fake.url, timeoutMs: 150000 });
  console.log("code", r.code, r.durationMs, r.stdout.slice(-500), r.stderr.slice(-1500));
  for (const m of fake.mainRequests()) console.log("MAIN", JSON.stringify(toolResults(m)).slice(0, 300), JSON.stringify(userTexts(m)).slice(0, 400));
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  const scopes = await store.scopes(); await store.close();
  console.log("scopes", scopes);
  for (const s of scopes) { const { log } = await recorded(project, s.replace("session:", "")); for (const l of log) console.log(l.event.kind, l.decision.verdict, JSON.stringify(l.decision.instructions ?? "").slice(0, 200)); }
  const logs = join(home, ".local/share/opencode/log"); for (const f of readdirSync(logs)) console.log(readFileSync(join(logs, f), "utf8").split("\n").filter((l) => /ERROR|reins|plugin/i.test(l)).slice(0, 15).join("\n"));
  await fake.close(); await stopHookDaemons({ HOME: home }); console.log("root", root);
}, 300000);
