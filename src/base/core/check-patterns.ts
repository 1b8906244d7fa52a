/**
 * The built-in check patterns (the policy's default `checks`): which commands are tests, lint, builds and
 * type checks, across ecosystems. Plain data, so the pure policy can carry them.
 */

/** The kinds of check reins knows by default. */
export type CheckKind = "tests" | "lint" | "build" | "typecheck";

// Building blocks of the patterns below; each pattern reads a command with its wrappers stripped.
const END = "(?=\\s|$)";
const BIN = "(?:\\S*/)?"; // `./node_modules/.bin/`, `.venv/bin/`, `vendor/bin/`...
const PY = `${BIN}python(?:\\d+(?:\\.\\d+)?)?`;
const SCRIPT = "^(?:npm|pnpm|yarn|bun)(?: run| run-script)? ";
const JS = `(?:(?:pnpm|yarn|bun) )?${BIN}`;
const MAKE = `^${BIN}g?make(?: (?:-[Cf] \\S+|-\\S+|\\w+=\\S*))*`;
const MVN = "^(?:mvn|\\S*mvnw)(?: \\S+)*? (?:\\S*:)?";
const GRADLE = "^(?:gradle|\\S*gradlew)(?: \\S+)*? (?:\\S*:)?";
const CARGO = "^cargo (?:\\+\\S+ )?";

/**
 * The built-in check patterns: regex sources matched against a command's words after `stripWrappers`,
 * joined by single spaces; the first match names the check. Build comes before typecheck so `tsc -b` is a build.
 */
export const DEFAULT_CHECK_PATTERNS: readonly { pattern: string; name: CheckKind }[] = [
  ...[
    `${SCRIPT}test(?=[\\s:]|$)`,
    `^npm t${END}`,
    `^${JS}(?:vitest|jest|mocha|ava|tap)${END}`,
    `^${BIN}node (?:(?:--import|--require|-r|--loader|--experimental-loader) \\S+ |-\\S+ )*--test(?=[\\s=]|$)`,
    `^deno test${END}`,
    `^${BIN}(?:pytest|py\\.test)${END}`,
    `^${PY} (?:-\\S+ )*-m (?:pytest|py\\.test|unittest|nose2|nose)${END}`,
    `^(?:${PY} -m )?${BIN}coverage run (?:\\S+ )*?(?:-m (?:pytest|unittest)|\\S*manage\\.py test|\\S*runtests\\.py)${END}`,
    `^(?:${PY} -m )?${BIN}(?:tox|nox)${END}`,
    `^(?:${PY} )?(?:\\./)?manage\\.py test${END}`,
    `^${BIN}django-admin test${END}`,
    `^(?:${PY} )?${BIN}runtests\\.py${END}`,
    `^go test${END}`,
    `${CARGO}(?:test|nextest run)${END}`,
    `${GRADLE}(?:test|check)${END}`,
    `${MVN}(?:test|verify)${END}`,
    `^dotnet test${END}`,
    `^${BIN}rspec${END}`,
    `^${BIN}rake (?:test|spec)(?=[\\s:]|$)`,
    `^${BIN}rails test${END}`,
    `^${BIN}phpunit${END}`,
    `^composer (?:run(?:-script)? )?test${END}`,
    `^mix test${END}`,
    `^swift test${END}`,
    `^${BIN}ctest${END}`,
    `${MAKE} (?:test|tests|check)${END}`,
    `^(?:\\./)?bin/test${END}`,
    `^(?:(?:ba)?sh )?(?:\\./)?(?:test|run_tests|run-tests)\\.sh${END}`,
    `^${BIN}bats${END}`,
  ].map((pattern) => ({ pattern, name: "tests" as const })),
  ...[
    `${SCRIPT}lint(?=[\\s:]|$)`,
    `^${JS}eslint${END}`,
    `^${JS}biome (?:check|lint|ci)${END}`,
    `^(?:${PY} -m )?${BIN}ruff(?! (?:format|server|clean|version|rule|config)\\b)(?: check)?${END}`,
    `^(?:${PY} -m )?${BIN}(?:flake8|pylint|pycodestyle)${END}`,
    `^${BIN}golangci-lint${END}`,
    `^go vet${END}`,
    `${CARGO}clippy${END}`,
    `^${BIN}(?:rubocop|phpcs|shellcheck)${END}`,
    `${MAKE} lint${END}`,
  ].map((pattern) => ({ pattern, name: "lint" as const })),
  ...[
    `${SCRIPT}build(?=[\\s:]|$)`,
    `^go build${END}`,
    `${CARGO}build${END}`,
    `${MVN}(?:package|install|compile)${END}`,
    `${GRADLE}(?:build|assemble)${END}`,
    `^dotnet build${END}`,
    `${MAKE}(?: (?:build|all)(?: .*)?)?$`,
    `^${BIN}cmake --build${END}`,
    `^${JS}tsc (?:\\S+ )*?(?:-b|--build)${END}`,
  ].map((pattern) => ({ pattern, name: "build" as const })),
  ...[
    `${SCRIPT}(?:typecheck|type-check|tsc)(?=[\\s:]|$)`,
    `^${JS}tsc${END}`,
    `^(?:${PY} -m )?${BIN}(?:mypy|pyright)${END}`,
    `${CARGO}check${END}`,
  ].map((pattern) => ({ pattern, name: "typecheck" as const })),
];
