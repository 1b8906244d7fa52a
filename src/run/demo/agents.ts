/** The scripted agents of `reins demo`: generators of events that react to reins' decisions. */
import type { Decision } from "../../base/core/decision.js";
import type { EventInput } from "../../base/core/reins-event.js";
import { fnv1a } from "../../base/core/timeline.js";

/** What a scripted agent does next: an event (time and scope are added by the runner), or a pause. */
export type Action = EventInput | { wait: number };

/** The script drives itself by the decisions it gets back, as a real agent reacts to hook answers. */
export type Script = Generator<Action, void, Decision | undefined>;

export interface ScriptedAgent {
  name: string;
  title: string;
  script(): Script;
}

interface Result {
  ok: boolean;
  output: string;
}

/** A tool call: the request, then the completion unless reins blocked it. Returns the request's decision. */
function* call(
  tool: string,
  input: unknown,
  touch: { command?: string; reads?: string[]; writes?: string[]; linesChanged?: number },
  result: Result,
): Generator<Action, Decision | undefined, Decision | undefined> {
  const inputHash = fnv1a(JSON.stringify(input));
  const request = { tool, inputHash, ...touch };
  const decision = yield { kind: "tool.requested", ...request };
  if (decision?.verdict === "block") return decision;
  yield {
    kind: "tool.completed",
    ...request,
    outcome: result.ok ? "success" : "failure",
    exitCode: result.ok ? 0 : 1,
    outputHash: fnv1a(result.output),
    ...(result.ok ? {} : { errorHash: fnv1a(result.output) }),
  };
  return decision;
}

const bash = (command: string, result: Result) => call("Bash", { command }, { command }, result);
const read = (path: string, content = "…") =>
  call("Read", { file_path: path }, { reads: [path] }, { ok: true, output: content });
const edit = (path: string, change: string, linesChanged = 6) =>
  call("Edit", { file_path: path, change }, { writes: [path], linesChanged }, { ok: true, output: "edited" });

/** Runs a check through Bash and reports it as a verification, as the hooks do for known check commands. */
function* check(
  name: string,
  command: string,
  result: Result,
  score?: number,
  flagged?: string[],
): Generator<Action, Decision | undefined, Decision | undefined> {
  const decision = yield* bash(command, result);
  if (decision?.verdict === "block") return decision;
  yield {
    kind: "verification.ran",
    name,
    command,
    tier: "fast",
    passed: result.ok,
    ...(score !== undefined ? { score } : {}),
    ...(flagged !== undefined ? { flagged } : {}),
  };
  return decision;
}

function* usage(input: number, output: number): Script {
  yield { kind: "usage.recorded", inputTokens: input, outputTokens: output, model: "claude-sonnet-4-5" };
}

/** Writes a test, sees it fail, fixes the code, runs tests and lint, and finishes with evidence. */
function* healthy(): Script {
  yield { kind: "session.started", agent: "scripted" };
  yield* usage(2_400, 300);
  yield* read("src/slugify.ts", "export function slugify…");
  yield* read("test/slugify.test.ts", "describe('slugify'…");
  yield* edit("test/slugify.test.ts", "it('drops accents')");
  yield* check("tests", "npm test", { ok: false, output: "1 failed: drops accents" }, 0.9);
  yield* usage(3_100, 450);
  yield* edit("src/slugify.ts", "normalize('NFD')");
  yield* check("tests", "npm test", { ok: true, output: "12 passed" }, 1);
  yield* check("lint", "npm run lint", { ok: true, output: "clean" });
  yield* usage(1_800, 200);
  yield { kind: "completion.claimed", level: "session" };
  yield { kind: "session.ended" };
}

/** Re-runs the same failing command, unchanged, again and again. */
function* stuck(): Script {
  yield { kind: "session.started", agent: "scripted" };
  yield* read("scripts/migrate.js");
  for (let i = 0; i < 8; i++) {
    yield* usage(3_500, 250);
    yield* bash("node scripts/migrate.js", {
      ok: false,
      output: "Error: connect ECONNREFUSED 127.0.0.1:5432",
    });
  }
}

/** Flips between two failing fixes. */
function* alternating(): Script {
  yield { kind: "session.started", agent: "scripted" };
  for (let i = 0; i < 4; i++) {
    yield* usage(2_000, 200);
    yield* bash("npm install left-pad@1.3.0", {
      ok: false,
      output: "ERESOLVE unable to resolve dependency tree",
    });
    yield* bash("npm install left-pad@1.3.0 --legacy-peer-deps", {
      ok: false,
      output: "EBADENGINE unsupported engine",
    });
  }
}

/** Keeps editing one file while the tests stay red; after the warning it reads the spec and makes one deliberate fix. */
function* thrashing(): Script {
  yield { kind: "session.started", agent: "scripted" };
  for (let i = 1; i <= 8; i++) {
    yield* usage(2_500, 400);
    const decision = yield* edit("src/parser.ts", `attempt ${i}`);
    if (decision?.results.some((r) => r.guard === "thrashing" && r.verdict !== "allow")) break;
    yield* check("lint", "npm run lint", { ok: true, output: "clean" });
    yield* check("tests", "npm test", { ok: false, output: `parser: expected 3 tokens, got ${i % 3}` }, 0.6, [
      "src/parser.ts",
    ]);
  }
  yield* read("docs/grammar.md", "tokens are separated by …");
  yield* edit("src/parser.ts", "follow the grammar's separator rule", 14);
  yield* check("tests", "npm test", { ok: true, output: "40 passed" }, 1);
  yield* check("lint", "npm run lint", { ok: true, output: "clean" });
  yield { kind: "completion.claimed", level: "session" };
}

/** Works at a steady pace, then a runaway loop burns tokens in a burst. */
function* burst(): Script {
  yield { kind: "session.started", agent: "scripted" };
  for (let minute = 0; minute < 6; minute++) {
    yield* usage(6_000, 800);
    yield* read(`src/module-${minute}.ts`);
    yield { wait: 60_000 };
  }
  for (let i = 0; i < 12; i++) {
    yield* usage(52_000, 3_000);
    const decision = yield* bash(`npx scopeSummary --all docs/part-${i}`, {
      ok: true,
      output: `summary ${i}`,
    });
    if (decision?.verdict === "block") {
      yield* bash(`npx scopeSummary --all docs/part-${i}`, { ok: true, output: `summary ${i}` });
      break;
    }
    yield { wait: 4_000 };
  }
}

/** Says "done" while the tests are red; refused, it fixes the code and proves it. */
function* redClaim(): Script {
  yield { kind: "session.started", agent: "scripted" };
  yield* usage(2_200, 300);
  yield* edit("src/api.ts", "add pagination");
  yield* check("tests", "npm test", { ok: false, output: "2 failed: pagination" }, 0.8);
  yield { kind: "completion.claimed", level: "session" };
  yield { kind: "completion.claimed", level: "session" };
  yield* usage(1_500, 250);
  yield* edit("src/api.ts", "off-by-one in page size");
  yield* check("tests", "npm test", { ok: true, output: "31 passed" }, 1);
  yield { kind: "completion.claimed", level: "session" };
}

/** The scripted agents of `reins demo`, in the order they are shown. */
export const demoAgents: readonly ScriptedAgent[] = [
  { name: "healthy", title: "A healthy test-driven agent that finishes", script: healthy },
  { name: "stuck", title: "Stuck re-running the same failing command", script: stuck },
  { name: "alternating", title: "Alternating between two failing fixes", script: alternating },
  { name: "thrashing", title: "Thrashing on one file", script: thrashing },
  { name: "burst", title: "Burning its budget in a burst", script: burst },
  { name: "red-claim", title: 'Claiming "done" with red tests', script: redClaim },
];
