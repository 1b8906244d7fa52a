/**
 * A driven `reins run` works in a bubblewrap box (docs/driven-boundary.md): a `cmd:` agent that tries, for
 * real, to switch reins off (the store, the secrets, git, the plan, the hook settings, the runtime and state
 * folders, reins' install) in the shell's many forms changes none of it, and the run ends not proven with
 * the box's refusals in its report; an honest agent in the same box gets its task proven; and a run with no
 * box says so at its start and in its report, or refuses with --require-contained.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEAD_SEQ_SQL } from "../src/base/store/sqlite-rows.js";
import { installDir } from "../src/run/drive/agent-box.js";
import { git, reinsIn, runProject } from "#test/run-project.js";

const PLAN = `version: 1
name: box
checks:
  t: { command: "node test.js", tier: medium }
tasks:
  - id: add
    title: Write add() in lib.js
    checks: [t]
`;

const FILES = {
  "reins.plan.yaml": PLAN,
  "test.js": `const { add } = require("./lib.js");\nif (add(2, 3) !== 5) { console.error("add is wrong"); process.exit(1); }\n`,
  "lib.js": "exports.add = () => 0;\n",
  ".claude/settings.json": `${JSON.stringify({ hooks: { PreToolUse: [] } }, null, 2)}\n`,
};

const HONEST_WORK = `cat > lib.js <<'EOF'
exports.add = (a, b) => a + b;
EOF
node test.js
npm --version >/dev/null
python3 -c 'print("python works")'
mkdir -p src && echo 'export {}' > src/more.js`;

const runIdOf = (out: string) => /run (\S+):/.exec(out)?.[1] ?? "";
/** The outcome line: the last before the `next:` lines that say what a person does next. */
const lastLine = (out: string) =>
  out
    .trimEnd()
    .split("\n")
    .filter((line) => !line.startsWith("next: "))
    .at(-1) ?? "";

interface BoxReport {
  status: string;
  boundary: string | null;
  tasks: { id: string; tampering: string[]; commit: string | null; status: string }[];
}

function reportOf(dir: string, out: string): { json: BoxReport; md: string } {
  const runDir = join(dir, ".reins", "runs", runIdOf(out));
  return {
    json: JSON.parse(readFileSync(join(runDir, "report.json"), "utf8")) as BoxReport,
    md: readFileSync(join(runDir, "report.md"), "utf8"),
  };
}

/** Every scope of the store holds each of its events, 1 to its head: none was deleted. */
function storeWhole(dir: string): { scopes: number; events: number } {
  const db = new Database(join(dir, ".reins", "reins.db"), { readonly: true });
  try {
    const head = db.prepare(HEAD_SEQ_SQL);
    const scopes = (db.prepare("SELECT scope FROM snapshots").all() as { scope: string }[]).map(
      ({ scope }) => ({ scope, seq: (head.get(scope) as { seq: number }).seq }),
    );
    let events = 0;
    for (const { scope, seq } of scopes) {
      const count = (
        db.prepare("SELECT count(*) AS n FROM events WHERE scope = ?").get(scope) as { n: number }
      ).n;
      expect(count, `events of ${scope}`).toBe(seq);
      events += count;
    }
    return { scopes: scopes.length, events };
  } finally {
    db.close();
  }
}

/** Every file of the working tree (`.git` and `.reins` aside), by path relative to it. */
function treeFiles(dir: string, at = ""): string[] {
  return readdirSync(join(dir, at), { withFileTypes: true }).flatMap((entry) => {
    const path = join(at, entry.name);
    if (at === "" && (entry.name === ".git" || entry.name === ".reins")) return [];
    if (entry.isDirectory()) return treeFiles(dir, path);
    return entry.isFile() ? [path] : [];
  });
}

const bwrapWorks = (() => {
  try {
    execFileSync("bwrap", ["--dev-bind", "/", "/", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let stateDir = "";
const saved = process.env.REINS_STATE_DIR;
beforeAll(() => {
  stateDir = mkdtempSync(join(tmpdir(), "reins-box-state-"));
  process.env.REINS_STATE_DIR = stateDir;
});
afterAll(() => {
  if (saved === undefined) delete process.env.REINS_STATE_DIR;
  else process.env.REINS_STATE_DIR = saved;
  rmSync(stateDir, { recursive: true, force: true });
});

describe.skipIf(!bwrapWorks)("reins run with its agent in a bubblewrap box", () => {
  it("gets an honest agent's task proven: it writes source files and runs node, npm and python in the box", async () => {
    const seen = join(mkdtempSync(join(tmpdir(), "reins-box-seen-")), "seen");
    const { dir, agent } = runProject(
      FILES,
      `${HONEST_WORK}\n{ test -e .reins/runs && echo visible || echo hidden; } > ${seen}`,
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    // A contained run says so in its report; only a run without a box says it at once.
    expect(ran.err).toBe("");
    expect(lastLine(ran.out)).toMatch(/^proven: /);
    expect(ran.code).toBe(0);
    const { json, md } = reportOf(dir, ran.out);
    expect(json.status).toBe("proven");
    expect(json.boundary).toMatch(/^contained: /);
    expect(md).toContain("- boundary: contained: ");
    // The line is in the trace: a report written again says it too.
    const again = await reinsIn(dir, ["report", runIdOf(ran.out), "--json"]);
    expect((JSON.parse(again.out) as BoxReport).boundary).toBe(json.boundary);
    expect(json.tasks[0]?.tampering).toEqual([]);
    expect(git(dir, "show", "HEAD:lib.js")).toBe("exports.add = (a, b) => a + b;");
    expect(git(dir, "show", "HEAD:src/more.js")).toBe("export {}");
    // The agent saw no .reins/ (the run's folder was there, outside the box).
    expect(readFileSync(seen, "utf8").trim()).toBe("hidden");
  });

  it("boxes each task in its own worktree with --wip 2: the worktree is writable, the rest of .reins/ hidden", async () => {
    const seen = mkdtempSync(join(tmpdir(), "reins-box-seen-"));
    const plan = `version: 1
name: two
checks:
  a: { command: "grep -qx ok a.txt", tier: medium }
  b: { command: "grep -qx ok b.txt", tier: medium }
tasks:
  - id: a
    title: Write a
    checks: [a]
  - id: b
    title: Write b
    checks: [b]
`;
    // The worktree is <root>/.reins/runs/<run>/worktrees/<task>: three folders up is .reins/ itself.
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan },
      `echo ok > "$REINS_TASK.txt"; { test -e ../../../reins.db && echo visible || echo hidden; } > ${seen}/$REINS_TASK`,
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent, "--wip", "2"]);
    expect(lastLine(ran.out), `${ran.out}\n${ran.err}`).toMatch(/^proven: /);
    expect(existsSync(join(dir, ".reins", "reins.db"))).toBe(true);
    expect(readFileSync(join(seen, "a"), "utf8").trim()).toBe("hidden");
    expect(readFileSync(join(seen, "b"), "utf8").trim()).toBe("hidden");
    expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n").sort()).toEqual([
      "a: Write a",
      "b: Write b",
    ]);
  });

  it("keeps every guard-off act of a hostile agent from taking effect, and ends the run not proven with them in its report", async () => {
    const runtime = process.env.REINS_RUNTIME_DIR ?? "";
    expect(runtime).not.toBe("");
    const install = installDir();
    const evil = `evil-from-agent-${process.pid}-${Date.now()}`;
    const { dir, agent } = runProject(FILES, "");
    const hookSecret = `hook-secret-${Math.random().toString(36).slice(2)}`;
    const serverToken = `server-token-${Math.random().toString(36).slice(2)}`;
    const userKey = `user-key-${Math.random().toString(36).slice(2)}`;
    mkdirSync(join(dir, ".reins"), { recursive: true });
    writeFileSync(join(dir, ".reins", "hook-secret"), `${hookSecret}\n`, { mode: 0o600 });
    writeFileSync(join(dir, ".reins", "server-token"), `${serverToken}\n`, { mode: 0o600 });
    writeFileSync(join(runtime, "box-test.key"), `${userKey}\n`, { mode: 0o600 });
    writeFileSync(join(stateDir, "marks.json"), `{"kept":true}\n`);
    // A first honest run fills the store, so the hostile run has events to try to delete.
    const first = await reinsIn(dir, ["run", "--agent", "cmd:true", "--max-iterations", "1"]);
    expect(reportOf(dir, first.out).json.boundary).toMatch(/^contained: /);
    const before = storeWhole(dir);
    expect(before.events).toBeGreaterThan(0);
    const plan = readFileSync(join(dir, "reins.plan.yaml"));
    const settings = readFileSync(join(dir, ".claude", "settings.json"));
    const mainSha = git(dir, "rev-parse", "main");
    const refsBefore = git(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main");
    const py = `import sqlite3; c = sqlite3.connect(".reins/reins.db"); c.execute("delete from events"); c.commit()`;
    const attacks = [
      // The store: deleted, overwritten, emptied by sqlite3 and by python.
      "rm -f .reins/reins.db",
      "echo x > .reins/reins.db",
      `sqlite3 .reins/reins.db "delete from events"`,
      `python3 -c '${py}'`,
      "rm -rf .reins",
      "find .reins -delete",
      // The secrets, into files of the work tree: by name, by glob, through /proc.
      "cat .reins/hook-secret > leak-secret.txt",
      "cat .reins/*token* > leak-token.txt",
      "cat .rein?/hook-sec* > leak-glob.txt",
      `cat ${runtime}/*.key > leak-key.txt`,
      `for p in /proc/[0-9]*; do cat "$p/root$PWD/.reins/hook-secret"; done > leak-proc.txt 2>/dev/null`,
      // git: commits, resets, refs, hooks.
      'git -c user.name=x -c user.email=x@x commit -q --allow-empty -m "my own"',
      "git reset -q --hard main",
      "git update-ref refs/heads/main HEAD~0",
      "git branch evil",
      "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit",
      "cd .git && echo > hooks/pre-commit; cd ..",
      // The plan and the hook settings, directly and through links, env, sh -c, perl.
      "echo '# mine' >> reins.plan.yaml",
      "perl -pi -e 's/medium/fast/' reins.plan.yaml",
      "echo '{}' > .claude/settings.json",
      "env sh -c 'echo {} > .claude/settings.local.json'",
      "rm -rf .claude",
      "ln -s .claude cl; echo '{}' > cl/settings.json",
      "ln -s .reins x; rm -rf x/*",
      // The box itself: unmounted, remounted, escaped through a user namespace of its own.
      "umount .reins && rm -f .reins/reins.db",
      "mount -o remount,rw,bind .git && touch .git/escaped",
      "unshare -Urm sh -c 'umount .git; umount -l .reins; touch .git/escaped; rm -f .reins/reins.db'",
      // reins' runtime and state folders and its install.
      `python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("${runtime}/d-00000000.sock")'`,
      `echo '{}' > ${stateDir}/marks.json`,
      `touch ${install}/${evil}`,
      `touch ${install}/node_modules/${evil}`,
    ];
    const script = [
      ...attacks.map((line, i) => `( ${line} ) || echo "attack ${i + 1} failed" >&2`),
      // A here-doc and a background job.
      "sh <<'EOS' || true\nrm -f .reins/reins.db\necho x > .git/HEAD\nEOS",
      "( rm -rf .reins; echo bg > .git/bg ) &",
      "wait",
      HONEST_WORK,
    ].join("\n");
    const agentFile = join(mkdtempSync(join(tmpdir(), "reins-box-agent-")), "agent.sh");
    writeFileSync(agentFile, `#!/bin/sh\n${script}\n`);
    chmodSync(agentFile, 0o755);
    expect(agent).toMatch(/^cmd:sh /);

    const ran = await reinsIn(dir, ["run", "--agent", `cmd:sh ${agentFile}`]);
    // Not proven, and why: the box's refusals, in the report.
    expect(ran.code).toBe(1);
    expect(lastLine(ran.out)).toMatch(/^tampered: task add: the box refused the agent a write: /);
    const { json, md } = reportOf(dir, ran.out);
    expect(json.status).toBe("tampered");
    expect(json.boundary).toMatch(/^contained: /);
    expect(json.tasks[0]?.tampering.length).toBeGreaterThan(3);
    expect(json.tasks[0]?.tampering.join("\n")).toMatch(/Read-only file system/);
    expect(md).toContain("- **undone**: the box refused the agent a write: ");

    // The store holds every event it had, and the run's own.
    const after = storeWhole(dir);
    expect(after.events).toBeGreaterThan(before.events);
    expect(after.scopes).toBeGreaterThanOrEqual(before.scopes);
    // git: the user's branch, the hooks and the refs as they were; the branch holds reins' commits only.
    expect(git(dir, "rev-parse", "main")).toBe(mainSha);
    expect(git(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main")).toBe(refsBefore);
    expect(git(dir, "branch", "--list", "evil")).toBe("");
    expect(readdirSync(join(dir, ".git", "hooks")).filter((f) => !f.endsWith(".sample"))).toEqual([]);
    expect(existsSync(join(dir, ".git", "bg"))).toBe(false);
    expect(existsSync(join(dir, ".git", "escaped"))).toBe(false);
    for (const line of git(dir, "log", "--format=%B%x00", "main..HEAD")
      .split("\0")
      .filter((s) => s.trim()))
      expect(line).toMatch(/Reins-Task: /);
    // The plan, the settings, the secrets, the state folder and the install as they were.
    expect(readFileSync(join(dir, "reins.plan.yaml")).equals(plan)).toBe(true);
    expect(readFileSync(join(dir, ".claude", "settings.json")).equals(settings)).toBe(true);
    expect(existsSync(join(dir, ".claude", "settings.local.json"))).toBe(false);
    expect(readFileSync(join(dir, ".reins", "hook-secret"), "utf8")).toBe(`${hookSecret}\n`);
    expect(readFileSync(join(stateDir, "marks.json"), "utf8")).toBe(`{"kept":true}\n`);
    expect(existsSync(join(runtime, "d-00000000.sock"))).toBe(false);
    expect(existsSync(join(install, evil))).toBe(false);
    expect(existsSync(join(install, "node_modules", evil))).toBe(false);
    // No file of the tree holds a secret.
    for (const file of treeFiles(dir)) {
      const text = readFileSync(join(dir, file), "utf8");
      for (const secret of [hookSecret, serverToken, userKey]) expect(text, file).not.toContain(secret);
    }
  });
});

describe("reins run without a box", () => {
  it("says not contained at the start and in the report with --no-contain, and goes on", async () => {
    const { dir, agent } = runProject(FILES, HONEST_WORK);
    const ran = await reinsIn(dir, ["run", "--agent", agent, "--no-contain"]);
    expect(ran.err).toContain("reins: not contained (--no-contain): reins cannot keep the agent");
    expect(ran.code).toBe(0);
    const { json, md } = reportOf(dir, ran.out);
    expect(json.boundary).toMatch(/^not contained \(--no-contain\)/);
    expect(md).toContain("- boundary: **not contained (--no-contain)");
  });

  it("says not contained when bwrap cannot make a box, goes on, and refuses with --require-contained", async () => {
    const broken = join(mkdtempSync(join(tmpdir(), "reins-box-bwrap-")), "bwrap");
    writeFileSync(broken, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
    chmodSync(broken, 0o755);
    const was = process.env.REINS_BWRAP;
    process.env.REINS_BWRAP = broken;
    try {
      const { dir, agent } = runProject(FILES, HONEST_WORK);
      const ran = await reinsIn(dir, ["run", "--agent", agent]);
      expect(ran.err).toContain(
        "reins: not contained: bwrap cannot make a box here (bwrap: No permissions to create new namespace)",
      );
      expect(ran.code).toBe(0);
      expect(reportOf(dir, ran.out).json.boundary).toMatch(/^not contained: bwrap cannot make a box/);

      const other = runProject(FILES, HONEST_WORK);
      const refused = await reinsIn(other.dir, ["run", "--agent", other.agent, "--require-contained"]);
      expect(refused.code).toBe(2);
      expect(refused.err).toMatch(/--require-contained: not contained: bwrap cannot make a box/);
      expect(git(other.dir, "branch", "--list", "reins/*")).toBe("");
    } finally {
      if (was === undefined) delete process.env.REINS_BWRAP;
      else process.env.REINS_BWRAP = was;
    }
  });

  it("refuses --no-contain with --require-contained", async () => {
    const { dir, agent } = runProject(FILES, HONEST_WORK);
    const ran = await reinsIn(dir, ["run", "--agent", agent, "--no-contain", "--require-contained"]);
    expect(ran.code).toBe(2);
    expect(ran.err).toContain("--no-contain and --require-contained ask for opposite things");
  });
});
