/**
 * A person's actions need a person: every command that records a `human.*` event, run for real (bin/reins.js,
 * real SQLite and Redis), succeeds from a person's shell and fails inside a bubblewrap box that hides the
 * project's `.reins/` as the agent's boundary does, however the command is spelt; the HTTP API's take the
 * people's token and refuse the agents'.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import type { ReinsEvent } from "../src/base/core/reins-event.js";
import { agentToken, apiToken, tokenPath } from "../src/base/config/hook-secret.js";
import { openStore } from "../src/base/store/open.js";
import { startApi } from "#test/api-server.js";
import { cleanEnv, reinsBin, runBounded, type BoundedRun } from "#test/processes.js";
import { redisUnavailableReason, startRedis, type RedisServer } from "#test/redis-server.js";

const repo = dirname(dirname(reinsBin));

/** A project with the demo's burst session (a paused budget, open alerts) in its store, and a spec. */
interface Project {
  root: string;
  project: string;
  home: string;
  /** `--store <spec>` for every command, or none for the project's own SQLite store. */
  store: string[];
  scope: string;
  alert: string;
}

/** Every project the tests made, removed when the file is done. */
const made: string[] = [];
afterAll(() => {
  for (const root of made) rmSync(root, { recursive: true, force: true });
});

async function makeProject(store: string[] = []): Promise<Project> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "reins-person-")));
  made.push(root);
  const project = join(root, "project");
  const home = join(root, "home");
  mkdirSync(project);
  mkdirSync(home);
  writeFileSync(join(project, "reins.config.json"), "{}");
  writeFileSync(join(project, "spec.md"), "# Spec\n\nThe app says hello.\n");
  const io = memoryIo({ cwd: project });
  expect(await run([...store, "demo", "--agent", "burst"], io), io.err.join("")).toBe(0);
  const opened = await openStore(store[1] ?? "sqlite", project);
  try {
    const scope = (await opened.scopes()).find((s) => s.startsWith("session:demo-burst-"));
    if (scope === undefined) throw new Error("the demo left no burst session");
    const alert = (await opened.alerts({ scope, acknowledged: false }))[0];
    if (alert === undefined) throw new Error(`the demo left no open alert in ${scope}`);
    return { root, project, home, store, scope, alert: alert.id };
  } finally {
    await opened.close();
  }
}

/** Every `human.*` event in the project's store, read from outside any box. */
async function humanEvents(p: Project): Promise<ReinsEvent[]> {
  const store = await openStore(p.store[1] ?? "sqlite", p.project);
  try {
    const found: ReinsEvent[] = [];
    for (const scope of await store.scopes())
      for (const { event } of await store.events(scope, { limit: 100_000 }))
        if (event.kind.startsWith("human.")) found.push(event);
    return found;
  } finally {
    await store.close();
  }
}

/** The events of `after` that `before` did not hold (the store lists scopes by recency, not by time). */
function addedSince(before: readonly ReinsEvent[], after: readonly ReinsEvent[]): ReinsEvent[] {
  const seen = new Map<string, number>();
  for (const e of before) seen.set(JSON.stringify(e), (seen.get(JSON.stringify(e)) ?? 0) + 1);
  return after.filter((e) => {
    const key = JSON.stringify(e);
    const left = seen.get(key) ?? 0;
    if (left > 0) seen.set(key, left - 1);
    return left === 0;
  });
}

/** One of a person's commands: its name in messages, its words and the event it records (null: none here). */
type Action = [name: string, argv: string[], kind: string | null];

function actionsOf(p: Project): Action[] {
  return [
    ["budget extend", ["budget", "extend", p.scope, "1000", "--reason", "more"], "human.budget_extended"],
    ["budget reset", ["budget", "reset", p.scope, "--reason", "fresh"], "human.budget_reset"],
    ["circuit ack", ["circuit", "ack", p.scope, "--reason", "seen"], "human.circuit_acknowledged"],
    ["circuit reset", ["circuit", "reset", p.scope, "--reason", "fixed"], "human.circuit_reset"],
    ["confirm", ["confirm", p.scope, "--reason", "go on"], "human.confirmed"],
    ["alerts --ack", ["alerts", "--ack", p.alert], "human.alert_acknowledged"],
    ["approve", ["approve", "spec.md", "--reason", "reviewed"], "human.spec_approved"],
    ["approve --task", ["approve", "--task", "t1", "--run", "r1", "--reason", "reviewed"], null],
  ];
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
const shell = (words: readonly string[]) => words.map(quote).join(" ");

/**
 * bubblewrap as the agent's boundary: the machine read-only, the test's folder writable, and the project's
 * `.reins/` an empty read-only folder (what the agent's sandbox makes of it: nothing to read, nothing to make).
 */
function boxArgs(p: Project): string[] {
  const reins = join(p.project, ".reins");
  return [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--bind", p.root, p.root,
    "--tmpfs", reins,
    "--remount-ro", reins,
    "--chdir", p.project,
    "--",
  ]; // prettier-ignore
}

/** Runs `script` with `sh -c` inside the box, as the agent's shell would. */
function inBox(p: Project, script: string, env: Record<string, string> = {}): Promise<BoundedRun> {
  return runBounded("bwrap", [...boxArgs(p), "/bin/sh", "-c", script], {
    cwd: p.project,
    env: cleanEnv(p.home, { npm_config_cache: join(p.root, "npm-cache"), ...env }),
    timeoutMs: 60_000,
  });
}

/** Runs reins' bin with `argv` from a person's shell: no box. */
function asPerson(p: Project, argv: string[], env: Record<string, string> = {}): Promise<BoundedRun> {
  return runBounded(process.execPath, [reinsBin, ...p.store, ...argv], {
    cwd: p.project,
    env: cleanEnv(p.home, env),
    timeoutMs: 60_000,
  });
}

/** The one line a command refused for want of a person prints. */
function refusedLine(action: string): RegExp {
  const name = action.replace(/[-]/g, "\\-");
  return new RegExp(
    `^reins: ${name} is a person's action, and this shell cannot show it is a person's \\(the people's token in \\S+/\\.reins/ is out of its reach\\): a person must run it in their own terminal\\n$`,
  );
}

/** Whether bubblewrap can make a box here; on CI it must. */
const boxWorks =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"])
    .status === 0;
if (!boxWorks && process.env.CI === "true") throw new Error("bubblewrap (bwrap) cannot make a box on CI");

describe.skipIf(!boxWorks)("a person's actions need a person (SQLite store)", () => {
  let p: Project;
  let token: string;
  beforeAll(async () => {
    p = await makeProject();
    // The person's token exists, as after `reins init` or `reins serve`: the box hides it.
    token = apiToken(p.project).value;
  }, 120_000);

  it("refuses each of a person's commands inside the boundary with one line and exit 1, recording nothing", async () => {
    const before = await humanEvents(p);
    const actions = actionsOf(p);
    const results = await Promise.all(
      actions.map(([, argv]) => inBox(p, shell([process.execPath, reinsBin, ...argv, "--by", "ana"]))),
    );
    actions.forEach(([name], i) => {
      const result = results[i]!;
      expect(result.code, `${name}: ${result.stderr}`).toBe(1);
      expect(result.stdout, name).toBe("");
      expect(result.stderr, name).toMatch(refusedLine(name));
    });
    expect(await humanEvents(p)).toEqual(before);
  }, 120_000);

  it("refuses a command given the project's real token inside the boundary, by --token or REINS_PERSON_TOKEN", async () => {
    const before = await humanEvents(p);
    const argv = ["budget", "extend", p.scope, "1000", "--reason", "more"];
    const given = await inBox(p, shell([process.execPath, reinsBin, ...argv, "--token", token]));
    const inherited = await inBox(p, shell([process.execPath, reinsBin, ...argv]), {
      REINS_PERSON_TOKEN: token,
    });
    for (const result of [given, inherited]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(refusedLine("budget extend"));
    }
    expect(await humanEvents(p)).toEqual(before);
  }, 60_000);

  it("records exactly one human event with who and why for each command from a person's shell", async () => {
    for (const [name, argv, kind] of actionsOf(p)) {
      const before = await humanEvents(p);
      const result = await asPerson(p, [...argv, "--by", "ana"]);
      if (kind === null) {
        // Past the proof to the command's own answer: no such run.
        expect(result.code, name).toBe(2);
        expect(result.stderr, name).toMatch(/^reins: no run r1 in /);
        expect(await humanEvents(p)).toEqual(before);
        continue;
      }
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stderr, name).toBe("");
      const added = addedSince(before, await humanEvents(p));
      expect(added, name).toHaveLength(1);
      expect(added[0], name).toMatchObject({ kind, by: "ana" });
      const reason = argv[argv.indexOf("--reason") + 1];
      if (argv.includes("--reason")) expect(added[0], name).toMatchObject({ reason });
    }
  }, 120_000);

  it("refuses a wrong --token or REINS_PERSON_TOKEN from a person's shell, and takes the right one", async () => {
    const before = await humanEvents(p);
    const argv = ["circuit", "reset", p.scope, "--reason", "fixed", "--by", "ci"];
    const wrong = "w".repeat(token.length);
    const results = [
      await asPerson(p, [...argv, "--token", wrong]),
      await asPerson(p, argv, { REINS_PERSON_TOKEN: wrong }),
      await asPerson(p, [...argv, "--token", token.slice(1)]),
    ];
    for (const result of results) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        "reins: circuit reset is a person's action, and the token given (--token or REINS_PERSON_TOKEN) is not this project's people's token (.reins/api-token): nothing was recorded\n",
      );
    }
    expect(await humanEvents(p)).toEqual(before);
    const right = await asPerson(p, argv, { REINS_PERSON_TOKEN: token });
    expect(right.code, right.stderr).toBe(0);
    expect(addedSince(before, await humanEvents(p))).toMatchObject([
      { kind: "human.circuit_reset", by: "ci" },
    ]);
  }, 60_000);

  it("refuses every spelling of a person's command the agent's shell can make", async () => {
    // npm finds reins as the project's own dependency, as in a project that installed it.
    mkdirSync(join(p.project, "node_modules", ".bin"), { recursive: true });
    if (!existsSync(join(p.project, "node_modules", "reins"))) {
      symlinkSync(repo, join(p.project, "node_modules", "reins"));
      symlinkSync("../reins/bin/reins.js", join(p.project, "node_modules", ".bin", "reins"));
    }
    const node = process.execPath;
    const s = quote(p.scope);
    const extend = `budget extend ${s} 1000 --reason more`;
    const runJs = join(repo, "dist", "cli", "run.js");
    const sqliteJs = join(repo, "dist", "base", "store", "sqlite.js");
    const spellings: [string, string][] = [
      ["node <bin> --cwd=.", `${node} ${reinsBin} --cwd=. ${extend}`],
      ["a symlink to the bin", `ln -sf ${reinsBin} ./r && ./r ${extend}`],
      ["npm exec", `npm exec reins -- ${extend}`],
      ["env -i", `env -i ${node} ${reinsBin} -C ${p.project} ${extend}`],
      ["variables", `B=${reinsBin}; C=budget; ${node} "$B" $C extend ${s} 1000 --reason more`],
      ["cd elsewhere", `cd .. && ${node} ${reinsBin} -C project circuit reset ${s}`],
      ["a glob", `${node} ${join(repo, "bin", "rein?.js")} circuit ack ${s}`],
      ["a here-doc", `sh <<'EOF'\n${node} ${reinsBin} confirm ${s} --reason go\nEOF`],
      ["a background job", `${node} ${reinsBin} budget reset ${s} --reason r & wait $!`],
      // xargs exits 123 when its command exits 1 to 125.
      [
        "xargs",
        `printf '%s\\n' budget extend ${s} 5 --reason r | xargs ${node} ${reinsBin}; test $? = 123 && exit 1`,
      ],
      ["a token in the environment", `REINS_PERSON_TOKEN=${token} ${node} ${reinsBin} ${extend}`],
      [
        "the CLI's run() in-process",
        `${node} --input-type=module -e "const m = await import('${runJs}'); process.exit(await m.run(['budget', 'extend', '${p.scope}', '5', '--reason', 'r']))"`,
      ],
    ];
    const direct = `${node} --input-type=module -e "const { SqliteStore } = await import('${sqliteJs}'); const s = new SqliteStore('.reins/reins.db'); await s.append('${p.scope}', [{ kind: 'human.budget_extended', scope: '${p.scope}', at: Date.now(), resource: 'tokens', amount: 1e6, by: 'me', reason: 'r' }], (await import('${join(repo, "dist", "base", "core", "index.js")}')).defaultPolicy);"`;
    const before = await humanEvents(p);
    const results = await Promise.all(spellings.map(([, script]) => inBox(p, script)));
    spellings.forEach(([name], i) => {
      const result = results[i]!;
      expect(result.code, `${name}: ${result.stderr}`).toBe(1);
      expect(result.stderr, name).toMatch(
        /is a person's action, and this shell cannot show it is a person's/,
      );
    });
    // Past the CLI, straight to the store with reins' own library: the store is out of reach too.
    const library = await inBox(p, direct);
    expect(library.code).not.toBe(0);
    expect(library.stderr).toMatch(/cannot open \.reins\/reins\.db/);
    expect(await humanEvents(p)).toEqual(before);
  }, 120_000);

  it("cannot make a project's first token inside the boundary", async () => {
    const fresh = await makeProject();
    expect(existsSync(tokenPath(fresh.project))).toBe(false);
    const result = await inBox(fresh, shell([process.execPath, reinsBin, "confirm", fresh.scope]));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(refusedLine("confirm"));
    expect(existsSync(tokenPath(fresh.project))).toBe(false);
    expect(await humanEvents(fresh)).toEqual([]);
    // A person's first action makes it (0600), and the next takes the same one.
    expect((await asPerson(fresh, ["confirm", fresh.scope])).code).toBe(0);
    expect(
      spawnSync("stat", ["-c", "%a", tokenPath(fresh.project)])
        .stdout.toString()
        .trim(),
    ).toBe("600");
    const first = apiToken(fresh.project).value;
    expect((await asPerson(fresh, ["confirm", fresh.scope, "--token", first])).code).toBe(0);
    expect(await humanEvents(fresh)).toHaveLength(2);
  }, 120_000);
});

const redisSkip = redisUnavailableReason();

describe.skipIf(!boxWorks || redisSkip !== null)("a person's actions on a store shared through Redis", () => {
  let redis: RedisServer;
  let p: Project;
  beforeAll(async () => {
    redis = await startRedis();
    p = await makeProject(["--store", redis.url]);
    apiToken(p.project);
  }, 120_000);
  afterAll(async () => {
    if (redis?.managed) await redis.stop();
  });

  it("needs the same proof: refused inside the boundary, though Redis is in reach; recorded once from a person's shell", async () => {
    const before = await humanEvents(p);
    for (const [name, argv] of actionsOf(p).slice(0, 6)) {
      const result = await inBox(p, shell([process.execPath, reinsBin, ...p.store, ...argv]));
      expect(result.code, `${name}: ${result.stderr}`).toBe(1);
      expect(result.stderr, name).toMatch(refusedLine(name));
    }
    expect(await humanEvents(p)).toEqual(before);
    const person = await asPerson(p, [
      "budget",
      "extend",
      p.scope,
      "1000",
      "--reason",
      "more",
      "--by",
      "ana",
    ]);
    expect(person.code, person.stderr).toBe(0);
    expect(addedSince(before, await humanEvents(p))).toMatchObject([
      { kind: "human.budget_extended", by: "ana", reason: "more", amount: 1000 },
    ]);
  }, 120_000);
});

describe("the HTTP API's human actions", () => {
  it("take the people's token: the agents' token is refused every one and nothing is recorded", async () => {
    const p = await makeProject();
    // A session whose breaker is open, so acknowledging it is an action the API takes.
    expect(await run(["demo", "--agent", "stuck"], memoryIo({ cwd: p.project }))).toBe(0);
    const api = await startApi({ project: p.project });
    try {
      const stuck = (await api.services.store.scopes()).find((s) => s.startsWith("session:demo-stuck-"));
      const id = encodeURIComponent(p.scope);
      const breaker = encodeURIComponent(stuck ?? "");
      const routes: [string, object][] = [
        [`/api/budgets/${id}/extend`, { additional_tokens: 1000, reason: "more", by: "ana" }],
        [`/api/budgets/${id}/reset`, { reason: "fresh", by: "ana" }],
        [`/api/circuits/${breaker}/acknowledge`, { reason: "seen", by: "ana" }],
        [`/api/circuits/${breaker}/reset`, { reason: "fixed", by: "ana" }],
        [`/api/alerts/${encodeURIComponent(p.alert)}/acknowledge`, { by: "ana" }],
      ];
      const agents = agentToken(p.project).value;
      for (const [path, body] of routes) {
        const refused = await api.call("POST", path, body, { token: agents });
        expect(refused.status, path).toBe(403);
        expect(refused.json.message, path).toMatch(/cannot act as a person/);
        expect((await api.call("POST", path, body, { token: null })).status, path).toBe(401);
      }
      expect(await humanEvents(p)).toEqual([]);
      // The people's token is the one the CLI reads: .reins/api-token.
      expect(api.token).toBe(apiToken(p.project).value);
      for (const [path, body] of routes) expect((await api.call("POST", path, body)).status, path).toBe(200);
      expect((await humanEvents(p)).map((e) => e.kind).sort()).toEqual([
        "human.alert_acknowledged",
        "human.budget_extended",
        "human.budget_reset",
        "human.circuit_acknowledged",
        "human.circuit_reset",
      ]);
    } finally {
      await api.close();
    }
  }, 60_000);
});
