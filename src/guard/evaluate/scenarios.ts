/** The efficacy benchmark's scripted sessions: stuck agents to stop, productive ones to leave alone. */
import type { LoggedRun } from "../logs/run.js";
import { SessionScript } from "./script.js";

/**
 * The efficacy benchmark's scripted sessions: agents stuck in varied ways, and productive agents whose work
 * repeats legitimately (polling, paging, re-running the tests after each fix, red-green TDD). A good guard
 * stops or denies every stuck one and never a productive one; each stuck session says how it is stuck.
 */

/** One scripted session, and whether a good guard stops it. */
export interface Scenario {
  name: string;
  /** true: the agent is stuck and should be stopped or denied; false: it is working and must be left alone. */
  stuck: boolean;
  what: string;
  run: LoggedRun;
}

/** A scenario named after its script's session id. */
function scenario(script: SessionScript, stuck: boolean, what: string): Scenario {
  return { name: script.id, stuck, what, run: script.run() };
}

const pytestFail = (failed: number, passed: number, names: string[]) =>
  `${names.map((n) => `FAILED tests/test_app.py::${n} - AssertionError`).join("\n")}\n==== ${failed} failed, ${passed} passed in 0.42s ====`;

function stuckSessions(): Scenario[] {
  const identical = new SessionScript("identical-retry");
  identical.read("src/db.ts");
  for (let i = 0; i < 10; i++) identical.bash("npm test", "Error: connect ECONNREFUSED 127.0.0.1:5432", 1);

  const noisy = new SessionScript("noisy-retry");
  for (let i = 1; i <= 10; i++)
    noisy.bash(
      `ATTEMPT=${i} node scripts/migrate.js # try ${i}`,
      'Error: relation "users" does not exist',
      1,
    );

  const alternating = new SessionScript("alternating");
  for (let i = 0; i < 5; i++) {
    alternating.bash("git stash", "Saved working directory and index state WIP on main: 1a2b3c4 wip");
    alternating.bash("git stash pop", "error: could not restore untracked files from stash", 1);
  }

  const sameError = new SessionScript("same-error");
  const commands = [
    "python -m app",
    "python app/main.py",
    "python -c 'import app'",
    "python3 -m app.cli",
    "python app/__main__.py",
    "python -m app --help",
    "python3 app/main.py --debug",
  ];
  for (const command of commands)
    sameError.bash(
      command,
      "Traceback (most recent call last):\nModuleNotFoundError: No module named 'yaml'",
      1,
    );

  const redTests = new SessionScript("red-without-change");
  redTests.edit("src/app.py", "return a", "return a + b");
  for (const command of [
    "python -m pytest",
    "python -m pytest -x",
    "python -m pytest -q",
    "pytest tests",
    "pytest -k add",
  ])
    redTests.bash(command, pytestFail(2, 10, ["test_add", "test_sum"]), 1);

  const rewrite = new SessionScript("rewrite-same-content");
  for (let i = 0; i < 5; i++) {
    rewrite.write("src/config.ts", "export const port = 8080;\n");
    rewrite.bash(`node dist/server.js --check ${i}`, "Error: port must be a number", 1);
  }

  const runaway = new SessionScript("runaway-spend");
  for (let i = 0; i < 12; i++) runaway.spend(60_000).read(`docs/part-${i}.md`, "x".repeat(100));

  const redDone = new SessionScript("claims-done-red");
  redDone
    .edit("src/slug.ts", "s", "s.toLowerCase()")
    .bash("npm test", "Tests: 1 failed, 4 passed, 5 total", 1);
  for (let i = 0; i < 3; i++) redDone.done("All done, the feature works.");

  return [
    scenario(identical, true, "the same failing command, 10 times, nothing changed"),
    scenario(noisy, true, "one failing command with only a counter and a comment changed"),
    scenario(alternating, true, "two commands in turn, A-B-A-B, results unchanged"),
    scenario(sameError, true, "different commands, the same error every time"),
    scenario(redTests, true, "the tests fail the same way 5 times with no edit between"),
    scenario(rewrite, true, "the same content written to one file again and again"),
    scenario(runaway, true, "720,000 tokens spent in 3 minutes, past the session budget"),
    scenario(redDone, true, '"done" claimed three times with the tests red'),
  ];
}

function productiveSessions(): Scenario[] {
  const poll = new SessionScript("poll-build");
  poll.bash("gh run watch --exit-status 4242 --interval 30 || true", "queued");
  for (const status of [
    "queued",
    "in_progress",
    "in_progress",
    "in_progress",
    "in_progress",
    "completed: success",
  ])
    poll.bash("gh run view 4242 --json status -q .status", status, 0, 30_000);

  const page = new SessionScript("page-long-file");
  for (let offset = 1; offset <= 2_401; offset += 300)
    page.read(
      "src/parser.ts",
      `lines ${offset}..${offset + 299} of parser.ts`,
      { offset, limit: 300 },
      8_000,
    );

  const tdd = new SessionScript("red-green-tdd");
  for (const [i, name] of [
    "parses empty input",
    "parses one field",
    "rejects a bad quote",
    "keeps escaped quotes",
  ].entries()) {
    tdd.edit("tests/csv.test.ts", `// case ${i}`, `it("${name}", () => { /* ... */ });`);
    tdd.bash(
      "npx vitest run tests/csv.test.ts",
      `FAIL tests/csv.test.ts > ${name}\nTests  1 failed | ${i} passed (${i + 1})`,
      1,
    );
    tdd.edit("src/csv.ts", `// step ${i}`, `// handles: ${name}`);
    tdd.bash("npx vitest run tests/csv.test.ts", `Tests  ${i + 1} passed (${i + 1})`);
  }
  tdd.done("All four CSV cases pass.");

  const fixes = new SessionScript("fix-step-by-step");
  const failing = [
    ["test_a", "test_b", "test_c", "test_d"],
    ["test_b", "test_c", "test_d"],
    ["test_c", "test_d"],
    ["test_d"],
  ];
  fixes.bash("python -m pytest", pytestFail(4, 8, failing[0] ?? []), 1);
  for (const [i, names] of failing.slice(1).entries()) {
    fixes.edit("src/app.py", `bug ${i}`, `fix ${i}`);
    fixes.bash("python -m pytest", pytestFail(names.length, 12 - names.length, names), 1);
  }
  fixes
    .edit("src/app.py", "bug 3", "fix 3")
    .bash("python -m pytest", "==== 12 passed in 0.40s ====")
    .done("Fixed all four.");

  const rerun = new SessionScript("rerun-after-each-change");
  for (let i = 0; i < 6; i++) {
    rerun.edit("src/cache.ts", `attempt ${i}`, `attempt ${i + 1}`);
    rerun.bash(
      "npm test",
      `Tests: 1 failed, 20 passed, 21 total\n  ● cache › expires entries (attempt ${i})`,
      1,
    );
  }
  rerun.edit("src/cache.ts", "attempt 6", "fixed").bash("npm test", "Tests: 21 passed, 21 total").done();

  const explore = new SessionScript("explore-large-codebase");
  for (let i = 0; i < 60; i++) explore.read(`src/module${i}.ts`, `module ${i}`, {}, 4_000);
  for (let i = 0; i < 6; i++)
    explore.bash(
      `grep -rn "legacyAuth" packages/pkg${i}/src`,
      `packages/pkg${i}/src/a.ts:${i + 10}: legacyAuth()`,
    );
  for (let i = 0; i < 6; i++) explore.edit(`packages/pkg${i}/src/a.ts`, "legacyAuth()", "auth.verify()");
  explore.bash("npm test", "Tests: 140 passed, 140 total").done("Replaced legacyAuth in six packages.");

  const parallel = new SessionScript("parallel-reads");
  for (let batch = 0; batch < 3; batch++)
    for (let i = 0; i < 8; i++)
      parallel.read(`src/feature/file${batch}-${i}.ts`, "x", {}, i === 0 ? 3_000 : 150);
  parallel.edit("src/feature/file0-0.ts", "a", "b").bash("npm test", "Tests: 9 passed, 9 total").done();

  const search = new SessionScript("search-without-hits");
  for (const name of ["legacyAuth", "legacy_auth", "LegacyAuth", "authLegacy", "oldAuth", "auth_v1"])
    search.bash(`grep -rn "${name}" src`, "", 1); // grep finds nothing: exit 1, no output
  search
    .bash('grep -rn "authV1" src', "src/login.ts:12: authV1(user)")
    .edit("src/login.ts", "authV1(user)", "auth.verify(user)");
  search.bash("npm test", "Tests: 8 passed, 8 total").done();

  const docs = new SessionScript("rebuild-docs");
  for (let i = 0; i < 4; i++) {
    docs.bash(`sed -i 's/^html_theme = .*/html_theme = "alabaster${i}"/' docs/conf.py`);
    docs.bash("rm -rf docs/_build && sphinx-build -b html docs docs/_build", "build succeeded, 1 warning.");
  }
  docs.bash("python -m pytest tests/test_docs.py -q", "4 passed in 1.20s").done("The docs build.");

  return [
    ...pythonSessions(),
    scenario(search, false, "six searches that find nothing (grep exits 1), then one that does"),
    scenario(docs, false, "the build output removed and rebuilt after each change"),
    scenario(poll, false, "the same status command until the build finishes"),
    scenario(page, false, "one long file read page by page"),
    scenario(tdd, false, "four cycles of a failing test, then its fix"),
    scenario(fixes, false, "the tests re-run after each fix, fewer failing each time"),
    scenario(rerun, false, "the same test fails six times, with a real change before each run"),
    scenario(explore, false, "73 calls in one task: reading, searching, editing six packages"),
    scenario(parallel, false, "three turns of eight parallel reads within seconds"),
  ];
}

/**
 * Python work as SWE-bench agents do it: an editor that refuses edits (SWE-agent's str_replace_editor says
 * "No replacement was performed"), and a reproduction script as the check, run before the edits and after.
 */
function pythonSessions(): Scenario[] {
  const words = ["unit", "scale", "value", "factor", "offset", "quantity", "ratio", "base"];
  const refused = new SessionScript("refused-edits-then-fix");
  refused.bash("ls", "README.rst\npkg\nsetup.py\ntests").read("pkg/core.py");
  refused.bash("python reproduce.py", "Traceback (most recent call last):\nValueError: bad unit", 1);
  for (let i = 0; i < 20; i++) {
    const old = `    return ${words[i % 8]}_of(${words[(i + 3) % 8]})`;
    refused.tool(
      "Edit",
      { file_path: "pkg/core.py", old_string: old, new_string: `    return convert(${words[i % 8]})` },
      { error: `No replacement was performed, old_str \`${old}\` did not appear verbatim in pkg/core.py.` },
    );
    if (i % 4 === 3) refused.read("pkg/core.py", `contents after try ${words[i % 8]}`);
  }
  for (let i = 0; i < 8; i++) refused.edit("pkg/core.py", `${words[i]}_of(x)`, `convert(${words[i]})`);
  refused.bash("python reproduce.py", "ok: 1 m");
  refused.bash("python -m pytest tests -q", "12 passed in 0.52s").done("Fixed.");

  const repro = new SessionScript("reproduce-script-checks");
  repro.bash("ls", "README.rst\npkg\nsetup.py\ntests");
  repro.bash("python reproduce.py", "Traceback (most recent call last):\nValueError: bad unit", 1);
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 8; i++)
      repro.edit(
        `pkg/${words[round]}.py`,
        `def ${words[i]}_of(x):`,
        `def ${words[i]}_of(x, ${words[round]}):`,
      );
    if (round < 3)
      repro.bash("python reproduce.py", `Traceback (most recent call last):\nValueError: ${words[round]}`, 1);
    else repro.bash("python reproduce.py", "ok: 1 m");
  }
  repro.bash("python -m pytest tests -q", "12 passed in 0.52s").done("Fixed.");
  return [
    scenario(refused, false, "20 edits the editor refused, then 8 that landed and the reproduction passing"),
    scenario(repro, false, "32 edits in four rounds, a reproduction script run before and after each"),
  ];
}

/** Every scripted session, stuck ones first. */
export function scenarios(): Scenario[] {
  return [...stuckSessions(), ...productiveSessions()];
}
