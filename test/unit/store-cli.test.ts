/** The CLI's store commands on the demo's sessions in a SQLite store. */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { resolvePolicy } from "../../src/base/core/index.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";

/**
 * One project folder with the demo's sessions in its SQLite store, shared by the tests below. Its own
 * `.reins` makes it the project root, whatever folders above it hold.
 */
const project = mkdtempSync(join(tmpdir(), "reins-store-cli-"));
mkdirSync(join(project, ".reins"));

async function reins(...argv: string[]) {
  const io = memoryIo({ cwd: project });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

async function sessionNamed(agent: string): Promise<string> {
  const { out } = await reins("sessions", "--json");
  const scopes = (JSON.parse(out) as { scope: string }[]).map((s) => s.scope);
  const scope = scopes.find((s) => s.startsWith(`session:demo-${agent}-`));
  if (scope === undefined) throw new Error(`no demo session for ${agent} in ${scopes.join(", ")}`);
  return scope;
}

beforeAll(async () => {
  expect((await reins("demo")).code).toBe(0);
});

describe("the store commands on the demo's SQLite store", () => {
  it("lists the demo's sessions with their budget and breaker", async () => {
    const { code, out } = await reins("sessions");
    expect(code).toBe(0);
    for (const agent of ["healthy", "stuck", "alternating", "thrashing", "burst", "red-claim"])
      expect(out).toContain(`session:demo-${agent}-`);
    expect(out).toMatch(
      /session:demo-burst-\S+\s+\d+\s+[\d-]+ [\d:]+\s+535,800 \/ 500,000\s+paused\s+closed/,
    );
    expect(out).toMatch(/session:demo-stuck-\S+.*active\s+open/);
  });

  it("shows one scope's budget bars, breaker and open alerts", async () => {
    const { code, out } = await reins("status", await sessionNamed("burst"));
    expect(code).toBe(0);
    expect(out).toMatch(/budget paused\s+breaker closed\s+\d+ events\s+4 open alerts/);
    expect(out).toMatch(/tokens\s+\[#{20}\]\s+107%\s+535,800 \/ 500,000/);
  });

  it("acknowledging a tripped breaker turns it half-open and lets one probe through", async () => {
    const scope = await sessionNamed("stuck");
    const acked = await reins("circuit", "ack", scope, "--reason", "database is up", "--by", "ana");
    expect(acked.out).toContain(`acknowledged: ${scope} is now active, breaker half_open`);
    const status = JSON.parse((await reins("status", scope, "--json")).out) as [
      { breaker: { status: string } },
    ];
    expect(status[0].breaker.status).toBe("half_open");
    const store = new SqliteStore(join(project, ".reins", "reins.db"));
    const log = await store.events(scope);
    expect(log.at(-1)?.event).toMatchObject({
      kind: "human.circuit_acknowledged",
      by: "ana",
      reason: "database is up",
    });
    const probe = {
      kind: "tool.requested" as const,
      at: Date.now(),
      scope,
      tool: "Bash",
      inputHash: "new",
      command: "pg_isready",
    };
    const { answers } = await store.append(
      scope,
      [probe, { ...probe, inputHash: "other" }],
      resolvePolicy({}),
    );
    expect(answers.map((a) => a?.verdict)).toEqual(["allow", "block"]);
    await store.close();
    expect((await reins("circuit", "reset", scope, "--by", "ana")).out).toContain("breaker closed");
  });

  it("extending a paused budget with a reason lets the next call through", async () => {
    const scope = await sessionNamed("burst");
    const missingReason = await reins("budget", "extend", scope, "100000");
    expect(missingReason.code).toBe(2);
    expect(missingReason.err).toContain("--reason");
    const extended = await reins(
      "budget",
      "extend",
      scope,
      "200000",
      "--reason",
      "summaries are worth it",
      "--by",
      "ana",
    );
    expect(extended.code).toBe(0);
    expect(extended.out).toContain(`extended by 200000 tokens: ${scope} is now active`);
    const store = new SqliteStore(join(project, ".reins", "reins.db"));
    const call = {
      kind: "tool.requested" as const,
      at: Date.now(),
      scope,
      tool: "Read",
      inputHash: "x",
      reads: ["a.ts"],
    };
    expect((await store.append(scope, [call], resolvePolicy({}))).answers[0]?.verdict).toBe("allow");
    await store.close();
  });

  it("lists open alerts and acknowledges one, recording who did", async () => {
    const scope = await sessionNamed("burst");
    const open = JSON.parse((await reins("alerts", "--scope", scope, "--json")).out) as {
      id: string;
      kind: string;
    }[];
    expect(open.map((a) => a.kind)).toContain("budget_paused");
    const id = open[0]!.id;
    expect((await reins("alerts", "--ack", id, "--by", "ana")).out).toBe(`acknowledged ${id}\n`);
    const after = JSON.parse((await reins("alerts", "--scope", scope, "--all", "--json")).out) as {
      id: string;
      acknowledgedBy: string | null;
    }[];
    expect(after.find((a) => a.id === id)?.acknowledgedBy).toBe("ana");
    expect((await reins("alerts", "--ack", "nope#1#0")).code).toBe(2);
  });

  it("acknowledging an alert records one human event, and the alert is acknowledged", async () => {
    const scope = await sessionNamed("burst");
    const open = JSON.parse((await reins("alerts", "--scope", scope, "--json")).out) as { id: string }[];
    const id = open.at(-1)!.id;
    const acked = await reins("alerts", "--ack", id, "--by", "bo", "--json");
    expect(acked.code).toBe(0);
    expect(JSON.parse(acked.out)).toMatchObject({ id, acknowledged: true, acknowledgedBy: "bo" });
    const store = new SqliteStore(join(project, ".reins", "reins.db"));
    const log = await store.events(scope);
    const acks = log.filter((r) => r.event.kind === "human.alert_acknowledged" && r.event.alertId === id);
    expect(acks.map((r) => r.event)).toMatchObject([{ by: "bo", scope }]);
    expect((await store.alerts({ scope })).find((a) => a.id === id)).toMatchObject({
      acknowledged: true,
      acknowledgedBy: "bo",
    });
    await store.close();
  });

  it("exports a scope as a trace that replays without divergence", async () => {
    const out = join(project, "stuck.jsonl");
    const exported = await reins("export", await sessionNamed("stuck"), "--out", out);
    expect(exported.code).toBe(0);
    const checked = await reins("check", out);
    expect(checked.code).toBe(0);
    expect(checked.out).toMatch(/^ok: (\d+) events replayed, \1 recorded decisions match/);
  });

  it("answers bad input with one line and exit 2", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["budget", "extend", "session:x", "lots", "--reason", "r"],
        /amount must be a positive number, got "lots"/,
      ],
      [
        ["budget", "extend", "session:x", "5", "--reason", "r", "--resource", "gold"],
        /--resource must be one of tokens/,
      ],
      [["circuit", "ack", "session:nope"], /no scope "session:nope" in the store/],
      [["status", "session:nope"], /no scope "session:nope"/],
      [["--store", "mongodb://x", "status"], /unknown store "mongodb:\/\/x"/],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await reins(...argv);
      expect(code, argv.join(" ")).toBe(2);
      expect(err).toMatch(message);
      expect(err.trim().split("\n")).toHaveLength(1);
    }
  });

  it("names what a budget extend call left out, with how to call it, in one line and exit 2", async () => {
    const usage =
      "reins budget extend <scope> <amount> --reason <text> [--resource <name>] [--task] [--by <name>]";
    const cases: [string[], string][] = [
      [[], "a scope, an amount and a reason (--reason)"],
      [["session:x"], "an amount and a reason (--reason)"],
      [["session:x", "--reason", "r"], "an amount"],
      [["session:x", "5"], "a reason (--reason)"],
    ];
    for (const [args, missing] of cases) {
      const { code, out, err } = await reins("budget", "extend", ...args);
      expect(code, args.join(" ")).toBe(2);
      expect(out).toBe("");
      expect(err).toBe(`reins: budget extend needs ${missing}: ${usage}\n`);
    }
  });

  it("names an unreachable Redis without its password, fast", async () => {
    const started = Date.now();
    const { code, err } = await reins("--store", "redis://ana:hunter2@127.0.0.1:1", "status");
    expect(code).toBe(2);
    expect(err).toMatch(/redis:\/\/ana:\*\*\*@127\.0\.0\.1:1/);
    expect(err).not.toContain("hunter2");
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("the read-only store commands where nothing was recorded", () => {
  it.each([["status"], ["sessions"]])(
    "%s outside any project says there is no store and makes no .reins folder",
    async (command) => {
      // No .git, no reins.config.json, no .reins: the folder itself is the root.
      const dir = mkdtempSync(join(tmpdir(), "reins-no-store-"));
      const io = memoryIo({ cwd: dir });
      expect(await run([command], io)).toBe(0);
      expect(io.out.join("")).toBe(`no reins store in ${dir}: nothing recorded yet\n`);
      expect(io.err).toEqual([]);
      const asJson = memoryIo({ cwd: dir });
      expect(await run([command, "--json"], asJson)).toBe(0);
      expect(JSON.parse(asJson.out.join(""))).toEqual([]);
      expect(existsSync(join(dir, ".reins"))).toBe(false);
    },
  );
});
