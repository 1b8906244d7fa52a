/** Tests of reading shell command lines: splitting, the last pipeline, wrappers. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commandShape, outputShape } from "./shapes.js";
import { pipelineOfLast, splitShell, stripWrappers, type Connector } from "./shell.js";
import { shellWrites } from "./shell-writes.js";

const REPRODUCE = "cat <<'EOF' > reproduce.py\nimport x\nprint(1 > 0)\nEOF\npython reproduce.py";

describe("splitShell", () => {
  it.each<[string, string, [string[], Connector][]]>([
    [
      "splits an agent's test run into cd, the test and its pipe",
      "cd /testbed && python -m pytest tests/test_x.py -q 2>&1 | tail -20",
      [
        [["cd", "/testbed"], null],
        [["python", "-m", "pytest", "tests/test_x.py", "-q"], "&&"],
        [["tail", "-20"], "|"],
      ],
    ],
    [
      "names every connector, with & and newlines as ;",
      "a; b || c & d\ne",
      [
        [["a"], null],
        [["b"], ";"],
        [["c"], "||"],
        [["d"], ";"],
        [["e"], ";"],
      ],
    ],
    [
      "keeps operators inside quotes and escaped spaces in their word",
      `echo "a && b" 'c | d' e\\ f`,
      [[["echo", "a && b", "c | d", "e f"], null]],
    ],
    [
      "keeps substitutions opaque",
      "echo $(cd x && ls) `date; id` ${A:-b;c}",
      [[["echo", "$(cd x && ls)", "`date; id`", "${A:-b;c}"], null]],
    ],
    [
      "keeps a quoted parenthesis inside a substitution",
      `echo "$(echo ")")" ; ls`,
      [
        [["echo", '$(echo ")")'], null],
        [["ls"], ";"],
      ],
    ],
    [
      "gives heredoc bodies to their command, not as new commands",
      REPRODUCE,
      [
        [["cat"], null],
        [["python", "reproduce.py"], ";"],
      ],
    ],
    ["drops comments", "npm test # && rm -rf /", [[["npm", "test"], null]]],
    [
      "continues a pipeline over a newline",
      "cat log |\n  grep FAIL",
      [
        [["cat", "log"], null],
        [["grep", "FAIL"], "|"],
      ],
    ],
    ["joins a backslash-newline continuation", "pytest \\\n  -q", [[["pytest", "-q"], null]]],
    [
      "drops the keywords of if/then/fi",
      "if pytest; then echo ok; fi",
      [
        [["pytest"], null],
        [["echo", "ok"], ";"],
      ],
    ],
    [
      "opens subshells into their commands",
      "(cd app && make) > build.log",
      [
        [["cd", "app"], null],
        [["make"], "&&"],
        [[], ";"],
      ],
    ],
    [
      "takes the rest of the line as one word on an unterminated quote",
      `echo "unterminated && rm x`,
      [[["echo", "unterminated && rm x"], null]],
    ],
    [
      "unquotes ANSI-C and double-quoted escapes",
      `echo $'a\\'b\\tc' "x\\"y\\$z"`,
      [[["echo", "a'b\tc", 'x"y$z'], null]],
    ],
    [
      "reads arithmetic and array assignments as single words",
      "((n > 3)) && arr=(a b) cmd",
      [
        [["((n > 3))"], null],
        [["arr=(a b)", "cmd"], "&&"],
      ],
    ],
  ])("%s", (_, command, expected) => {
    expect(splitShell(command).map((c) => [c.words, c.connector])).toEqual(expected);
  });

  it("records redirections with their operator and unquoted target", () => {
    const [command] = splitShell(`run > out 2>&1 >> "my log" 2> err < in &> all >&2 1>one`);
    expect(command?.words).toEqual(["run"]);
    expect(command?.redirects).toEqual([
      { op: ">", target: "out" },
      { op: "2>&", target: "1" },
      { op: ">>", target: "my log" },
      { op: "2>", target: "err" },
      { op: "<", target: "in" },
      { op: "&>", target: "all" },
      { op: ">&", target: "2" },
      { op: "1>", target: "one" },
    ]);
  });

  it("keeps a heredoc's body on its redirection and in its command's text", () => {
    const [cat] = splitShell(REPRODUCE);
    expect(cat?.redirects).toEqual([
      { op: "<<", target: "EOF", body: "import x\nprint(1 > 0)" },
      { op: ">", target: "reproduce.py" },
    ]);
    expect(cat?.text).toBe("cat <<'EOF' > reproduce.py\nimport x\nprint(1 > 0)\nEOF");
  });

  it("strips leading tabs from a <<- heredoc and its terminator", () => {
    const commands = splitShell("python - <<-END\n\timport sys\n\tEND\necho done");
    expect(commands[0]?.redirects[0]).toEqual({ op: "<<-", target: "END", body: "import sys" });
    expect(commands[1]?.words).toEqual(["echo", "done"]);
  });

  it("gives each command its own source text", () => {
    expect(splitShell("FOO=1 npm test && npm run lint").map((c) => c.text)).toEqual([
      "FOO=1 npm test",
      "npm run lint",
    ]);
  });
});

describe("pipelineOfLast", () => {
  const stagesOf = (command: string) => pipelineOfLast(command).stages.map((s) => s.words[0]);

  it("finds the last pipeline after a cd", () => {
    expect(stagesOf("cd /testbed && python -m pytest -q 2>&1 | tail -20")).toEqual(["python", "tail"]);
    expect(pipelineOfLast("cd /testbed && pytest | tail").pipefail).toBe(false);
  });

  it("is the last command alone when nothing pipes into it", () => {
    expect(stagesOf("pytest | tail; echo done")).toEqual(["echo"]);
  });

  it("sees set -o pipefail only when it comes earlier", () => {
    expect(pipelineOfLast("set -o pipefail; pytest | tee log").pipefail).toBe(true);
    expect(pipelineOfLast("set -euo pipefail\npytest | tee log").pipefail).toBe(true);
    expect(pipelineOfLast("pytest | tee log; set -o pipefail").pipefail).toBe(false);
    expect(pipelineOfLast("set +o pipefail; pytest | tee log").pipefail).toBe(false);
  });

  it("looks into bash -c, whose status is its script's", () => {
    expect(stagesOf(`bash -lc "cd x && pytest -q | tail -5"`)).toEqual(["pytest", "tail"]);
    expect(pipelineOfLast(`bash -o pipefail -c "pytest | tail"`).pipefail).toBe(true);
  });

  it("has no stages for an empty line", () => {
    expect(pipelineOfLast("   # nothing")).toEqual({ stages: [], pipefail: false });
  });
});

describe("stripWrappers", () => {
  const strip = (command: string) => stripWrappers(splitShell(command)[0]?.words ?? []).join(" ");

  it.each([
    [`FOO=1 BAR="x y" npm test`, "npm test"],
    ["env -i PATH=/bin CI=1 pytest", "pytest"],
    ["env -u HOME pytest", "pytest"],
    ["time -p pytest", "pytest"],
    ["timeout -s KILL -k 5 60 pytest -x", "pytest -x"],
    ["timeout 10m go test ./...", "go test ./..."],
    ["nice -n 10 make", "make"],
    ["stdbuf -oL -e L pytest", "pytest"],
    ["xvfb-run -a npm test", "npm test"],
    ["command pytest", "pytest"],
    ["exec pytest", "pytest"],
    ["sudo -E -u app pytest", "pytest"],
    ["poetry run pytest", "pytest"],
    ["uv run --with pytest-cov pytest", "pytest"],
    ["uv run -- pytest", "pytest"],
    ["pipenv run pytest", "pytest"],
    ["pdm run pytest", "pytest"],
    ["hatch run pytest", "pytest"],
    ["conda run -n testbed python -m pytest", "python -m pytest"],
    ["bundle exec rspec", "rspec"],
    ["npx --yes vitest run", "vitest run"],
    ["pnpm exec vitest", "vitest"],
    ["yarn exec jest", "jest"],
    ["bunx vitest", "vitest"],
    ["timeout 300 env CI=1 poetry run python -m pytest -q", "python -m pytest -q"],
  ])("%s runs %s", (command, expected) => {
    expect(strip(command)).toBe(expected);
  });

  it.each(["python -m pytest", "command -v pytest", "npm test", "git status"])(
    "keeps %s as it is",
    (command) => {
      expect(strip(command)).toBe(command);
    },
  );
});

describe("shellWrites", () => {
  it.each<[string, string[]]>([
    ["echo hi > out.txt", ["out.txt"]],
    ["echo hi >> log.txt 2>&1", ["log.txt"]],
    ["make > /dev/null 2>&1", []],
    ["make 2> errors.txt", []],
    ["make &> all.log", ["all.log"]],
    ["echo x 1> one.txt", ["one.txt"]],
    ["echo x >&2", []],
    ["echo x >& both.log", ["both.log"]],
    [`pytest | tee -a a.txt "b c.txt"`, ["a.txt", "b c.txt"]],
    ["sed -i 's/a/b/' src/x.py && python -m pytest", ["src/x.py"]],
    ["sed -i.bak -e 's/a/b/' -e 's/c/d/' a.py b.py", ["a.py", "b.py"]],
    ["sed -i '' 's/a/b/' bsd.py", ["bsd.py"]],
    ["sed --in-place=.orig 's/a/b/' g.py", ["g.py"]],
    ["sed -n 1,20p f.py", []],
    ["sed 's/a/b/' f.py > g.py", ["g.py"]],
    ["perl -pi -e 's/a/b/' x.pl y.pl", ["x.pl", "y.pl"]],
    ["perl -i -pe 's/a/b/' z.pl", ["z.pl"]],
    ["perl -ne 'print if /x/' z.pl", []],
    ["touch a.py b.py", []],
    ["touch -d yesterday c.py", []],
    ["cp -r src/ backup/", ["backup/"]],
    ["cp a b c dir/", ["dir/"]],
    ["cp -t dir a b", ["dir"]],
    ["mv old.py new.py", ["new.py"]],
    ["rm -rf build dist && rm reproduce.py", []],
    ["truncate -s 0 log.txt", ["log.txt"]],
    ["dd if=/dev/zero of=disk.img bs=1M count=1", ["disk.img"]],
    ["patch -p1 -i fix.diff", []],
    ["patch -p1 < fix.diff", []],
    ["patch src/x.py fix.diff", ["src/x.py"]],
    ["git checkout -- a.py b.py", ["a.py", "b.py"]],
    ["git checkout main", []],
    ["git restore src/x.py", ["src/x.py"]],
    ["git restore --staged x.py", []],
    [REPRODUCE, ["reproduce.py"]],
    [`cat <<EOF > "my file.py"\nx = 1\nEOF`, ["my file.py"]],
    ["echo x > $OUT", []],
    [`echo x > "$(mktemp)"`, []],
    ["rm -f *.pyc", []],
    ["echo a > f; echo b >> f; touch f", ["f"]],
    [`bash -c "echo hi > inner.txt"`, ["inner.txt"]],
    ["echo 127.0.0.1 host | sudo tee /etc/hosts", ["/etc/hosts"]],
    ["[[ a > b ]] && echo yes", []],
    ["cd /testbed && python -m pytest tests/test_x.py -q 2>&1 | tail -20", []],
    ["grep -rn 'x > y' src", []],
  ])("%j writes %j", (command, expected) => {
    expect(shellWrites(command)).toEqual(expected);
  });
});

describe("commandShape", () => {
  it.each([
    ["ATTEMPT=3 npm test # try 3", "ATTEMPT=4 npm test # try 4"],
    ["npm test", "FOO=1 npm test # attempt 2"],
    ["npm   test", `"npm" test`],
    ["pytest /tmp/tmp.a1b2c3/test_x.py", "pytest /tmp/tmp.zz9/test_x.py"],
    ["cat $TMPDIR/run-1/log", "cat $TMPDIR/run-2/log"],
    ["ls /var/folders/xy/abc/T/out", "ls /var/folders/qq/def/T/out"],
    [
      "curl -H 'X-Id: 550e8400-e29b-41d4-a716-446655440000' x",
      "curl -H 'X-Id: 6ba7b810-9dad-11d1-80b4-00c04fd430c8' x",
    ],
    ["grep 2024-01-02T10:00:00Z log", "grep 2025-06-30T23:59:59.123Z log"],
    ["git show 1a2b3c4d5e", "git show 9f8e7d6c5b"],
    ["sleep 5 && pytest", "sleep 10 && pytest"],
    ["cd /testbed && DEBUG=1 pytest -x", "cd /testbed && pytest -x # again"],
  ])("%j has the same shape as %j", (a, b) => {
    expect(commandShape(a)).toBe(commandShape(b));
  });

  it.each([
    ["npm test", "npm run lint"],
    ["pytest tests/test_a.py", "pytest tests/test_b.py"],
    ["cat <<EOF > a.py\nx = 1\nEOF", "cat <<EOF > a.py\ny = 1\nEOF"],
    ["npm test && npm run lint", "npm test || npm run lint"],
    ["echo 'a b'", "echo a b"],
    ["python3 x.py", "python x.py"],
  ])("%j and %j have different shapes", (a, b) => {
    expect(commandShape(a)).not.toBe(commandShape(b));
  });

  it("reads as the command with its noise replaced", () => {
    expect(commandShape("FOO=1 pytest -k test_x --seed 1234 /tmp/run/x # again")).toBe(
      "pytest -k test_x --seed <n> <tmp>",
    );
  });
});

describe("outputShape", () => {
  it.each([
    ["Ran 3 tests in 0.010s", "Ran 3 tests in 0.200s"],
    ["=== 1 failed, 2 passed in 0.52s ===", "=== 1 failed, 2 passed in 1.5s ==="],
    ["done in 1.5 seconds", "done in 12 seconds"],
    ["took 123ms", "took 9ms"],
    ["Time:        0.512 s", "Time:        1.004 s"],
    ["[2024-01-02 10:11:12] started", "[2024-03-04 01:02:03] started"],
    ["worker pid 1234 exited", "worker pid 99 exited"],
    ["object at 0x7f3a2b1c", "object at 0x7f00aa00"],
    ["wrote /tmp/pytest-of-root/pytest-3/out.txt", "wrote /tmp/pytest-of-root/pytest-4/out.txt"],
    ["run 550e8400-e29b-41d4-a716-446655440000", "run 6ba7b810-9dad-11d1-80b4-00c04fd430c8"],
    ["commit 1a2b3c4d5e6f7a8b", "commit 9a8b7c6d5e4f3a2b"],
    ["\u001b[31mFAIL\u001b[0m x", "FAIL x"],
  ])("%j has the same shape as %j", (a, b) => {
    expect(outputShape(a)).toBe(outputShape(b));
  });

  it.each([
    ["3 failed, 10 passed", "2 failed, 11 passed"],
    ["Ran 3 tests", "Ran 4 tests"],
    ["line 14: x", "line 15: x"],
  ])("%j and %j have different shapes", (a, b) => {
    expect(outputShape(a)).not.toBe(outputShape(b));
  });

  it("keeps the test count of a unittest summary", () => {
    expect(outputShape("Ran 3 tests in 0.010s")).toBe("Ran 3 tests in <duration>");
  });

  it("reads only the first and last 8,000 characters of long output", () => {
    const middle = (n: number) => `${"a".repeat(10_000)}${n}${"b".repeat(10_000)}`;
    expect(outputShape(middle(1))).toBe(outputShape(middle(2)));
    expect(outputShape(middle(1)).length).toBeLessThan(16_100);
  });
});

describe("never throwing", () => {
  const fns = { splitShell, shellWrites, commandShape, outputShape, pipelineOfLast };
  const tricky = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "'",
          '"',
          "\\",
          "`",
          "$(",
          "${",
          ")",
          "(",
          "((",
          "<<",
          "<<-",
          "<<'EOF'",
          "EOF",
          "\n",
          "\t",
          " ",
          "\0",
          "\uD800",
          "\uDC00",
          "#",
          "|",
          "&&",
          ";",
          ">",
          "2>&1",
          "&>",
          "sed -i",
          "bash -c",
          "=",
          "$'",
        ),
        fc.string({ unit: "binary", maxLength: 8 }),
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join(""));

  it("never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.oneof(tricky, fc.string({ unit: "binary", maxLength: 200 })), (text) => {
        for (const fn of Object.values(fns)) fn(text);
      }),
      { seed: 20261123, numRuns: 300 },
    );
  });

  // Each input, its commands' words: none is lost, split apart or expanded, and nothing is read as a write.
  const dq = '"$('.repeat(34_000);
  it.each<[string, string, string[][]]>([
    ["quotes", "'".repeat(100_000), [[""]]],
    ["substitutions", "$(".repeat(50_000), [["$(".repeat(50_000)]]],
    ["double-quoted substitutions", dq, [[dq.slice(1)]]],
    ["heredocs", "cat <<EOF\n".repeat(10_000), [["cat"]]],
    ["backslashes", "\\".repeat(100_000), [["\\".repeat(50_000)]]],
    ["words", "a ".repeat(50_000), [Array<string>(50_000).fill("a")]],
    ["comments", "# x\n".repeat(25_000), []],
  ])("handles 100 KB of %s", (_, text, words) => {
    expect(splitShell(text).map((c) => c.words)).toEqual(words);
    expect(pipelineOfLast(text).stages.map((c) => c.words)).toEqual(words);
    expect(shellWrites(text)).toEqual([]);
    // Requoting adds at most a pair of quotes; an output this long keeps its two 8,000-character ends.
    expect(commandShape(text).length).toBeLessThanOrEqual(text.length + 2);
    expect(outputShape(text)).toHaveLength(8_000 + "\n…\n".length + 8_000);
  });
});

describe("commandShape invariants", () => {
  const reserved = new Set(["if", "then", "elif", "else", "fi", "do", "done", "while", "until", "esac"]);
  const word = fc.oneof(
    fc.stringMatching(/^[a-z0-9_./-]{1,8}$/).filter((w) => !reserved.has(w)),
    fc.stringMatching(/^[a-z0-9 ]{0,8}$/).map((w) => `'${w}'`),
    fc.stringMatching(/^[a-z0-9 ]{0,8}$/).map((w) => `"${w}"`),
  );
  const simpleCommand = fc.array(word, { minLength: 1, maxLength: 6 }).map((words) => words.join(" "));
  const comment = fc.stringMatching(/^[^\n\r]{0,20}$/);
  const assignment = fc
    .tuple(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,6}$/), fc.stringMatching(/^[a-z0-9]{0,6}$/))
    .map(([name, value]) => `${name}=${value}`);

  it("is unchanged by a trailing comment or a leading assignment", () => {
    fc.assert(
      fc.property(simpleCommand, comment, assignment, (command, note, env) => {
        const shape = commandShape(command);
        expect(commandShape(`${command} # ${note}`)).toBe(shape);
        expect(commandShape(`${env} ${command}`)).toBe(shape);
      }),
      { seed: 20261123, numRuns: 300 },
    );
  });
});
