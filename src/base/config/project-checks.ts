/** A project's own check commands (test, lint, build, typecheck), read from its files. */
import type { CheckKind } from "../core/check-patterns.js";

/**
 * The check commands a project uses, from its files, so an instruction suggests the project's own command:
 * never `npm test` where there is no package.json.
 */

/** How `detectProjectChecks` reads a project: paths relative to its root; `list` names the root's files. */
export interface ProjectFiles {
  exists(path: string): boolean;
  read(path: string): string | null;
  list?(): string[];
}

/** The project's own check commands, by kind. */
export type ProjectChecks = Partial<Record<CheckKind, string>>;

/** A JSON object from a file, or null when it is missing or malformed. */
function readJson(files: ProjectFiles, path: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(files.read(path) ?? "null");
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function scriptsOf(json: Record<string, unknown> | null): Record<string, unknown> {
  const scripts = json?.scripts;
  return scripts !== null && typeof scripts === "object" ? (scripts as Record<string, unknown>) : {};
}

function nodeChecks(files: ProjectFiles): ProjectChecks {
  const json = readJson(files, "package.json");
  const scripts = scriptsOf(json);
  // `npm init` writes a test script that only fails: it is no test command.
  const has = (name: string) => {
    const script = scripts[name];
    return typeof script === "string" && !script.includes("no test specified");
  };
  const declared = typeof json?.packageManager === "string" ? json.packageManager.split("@")[0] : undefined;
  const pm = files.exists("pnpm-lock.yaml")
    ? "pnpm"
    : files.exists("yarn.lock")
      ? "yarn"
      : files.exists("bun.lockb") || files.exists("bun.lock")
        ? "bun"
        : ["pnpm", "yarn", "bun"].includes(declared ?? "")
          ? (declared ?? "npm")
          : "npm";
  const out: ProjectChecks = {};
  // `bun test` runs bun's own runner, not the script.
  if (has("test")) out.tests = pm === "bun" ? "bun run test" : `${pm} test`;
  if (has("lint")) out.lint = `${pm} run lint`;
  if (has("build")) out.build = `${pm} run build`;
  const typecheck = ["typecheck", "type-check"].find(has);
  if (typecheck !== undefined) out.typecheck = `${pm} run ${typecheck}`;
  return out;
}

function makeChecks(files: ProjectFiles): ProjectChecks {
  const makefile = ["Makefile", "makefile", "GNUmakefile"].map((f) => files.read(f)).find((t) => t != null);
  if (makefile == null) return {};
  const targets = new Set(
    [...makefile.matchAll(/^([A-Za-z0-9_.\- ]+?)\s*::?(?!=)/gm)].flatMap((m) => (m[1] ?? "").split(/\s+/)),
  );
  const first = (...names: string[]) => names.find((t) => targets.has(t));
  const out: ProjectChecks = {};
  const tests = first("test", "tests", "check");
  if (tests !== undefined) out.tests = `make ${tests}`;
  if (targets.has("lint")) out.lint = "make lint";
  if (targets.has("build")) out.build = "make build";
  const typecheck = first("typecheck", "type-check");
  if (typecheck !== undefined) out.typecheck = `make ${typecheck}`;
  return out;
}

function pythonChecks(files: ProjectFiles): ProjectChecks {
  const pyproject = files.read("pyproject.toml") ?? "";
  const setupCfg = files.read("setup.cfg") ?? "";
  const toxIni = files.read("tox.ini") ?? "";
  const markers = [
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "tox.ini",
    "pytest.ini",
    "manage.py",
    "conftest.py",
  ];
  if (!markers.some((f) => files.exists(f)) && !files.exists("requirements.txt")) return {};
  const pytestConfigured =
    files.exists("pytest.ini") ||
    files.exists("conftest.py") ||
    /^\[tool\.pytest/m.test(pyproject) ||
    /^\[tool:pytest\]/m.test(setupCfg) ||
    /^\[pytest\]/m.test(toxIni);
  const out: ProjectChecks = {
    tests: files.exists("tests/runtests.py")
      ? "python tests/runtests.py"
      : files.exists("manage.py") && !pytestConfigured
        ? "python manage.py test"
        : "python -m pytest",
  };
  if (/^\[tool\.ruff\b/m.test(pyproject) || files.exists("ruff.toml") || files.exists(".ruff.toml"))
    out.lint = "ruff check .";
  else if (files.exists(".flake8") || /^\[flake8\]/m.test(setupCfg) || /^\[flake8\]/m.test(toxIni))
    out.lint = "flake8";
  if (/^\[tool\.mypy\b/m.test(pyproject) || files.exists("mypy.ini") || /^\[mypy\]/m.test(setupCfg))
    out.typecheck = "mypy .";
  else if (/^\[tool\.pyright\b/m.test(pyproject) || files.exists("pyrightconfig.json"))
    out.typecheck = "pyright";
  return out;
}

function goChecks(files: ProjectFiles): ProjectChecks {
  return files.exists("go.mod")
    ? { tests: "go test ./...", lint: "go vet ./...", build: "go build ./..." }
    : {};
}

function rustChecks(files: ProjectFiles): ProjectChecks {
  return files.exists("Cargo.toml")
    ? { tests: "cargo test", lint: "cargo clippy", build: "cargo build", typecheck: "cargo check" }
    : {};
}

function jvmChecks(files: ProjectFiles): ProjectChecks {
  if (files.exists("pom.xml")) {
    const mvn = files.exists("mvnw") ? "./mvnw" : "mvn";
    return { tests: `${mvn} test`, build: `${mvn} package` };
  }
  const gradleFiles = ["build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"];
  if (!gradleFiles.some((f) => files.exists(f))) return {};
  const gradle = files.exists("gradlew") ? "./gradlew" : "gradle";
  return { tests: `${gradle} test`, build: `${gradle} build` };
}

function dotnetChecks(files: ProjectFiles): ProjectChecks {
  const names = files.list?.() ?? [];
  return names.some((f) => /\.(?:sln|slnx|csproj|fsproj|vbproj)$/.test(f))
    ? { tests: "dotnet test", build: "dotnet build" }
    : {};
}

function rubyChecks(files: ProjectFiles): ProjectChecks {
  if (!files.exists("Gemfile")) return {};
  const rspec = files.exists(".rspec") || files.exists("spec/spec_helper.rb");
  const out: ProjectChecks = { tests: rspec ? "bundle exec rspec" : "bundle exec rake test" };
  if (files.exists(".rubocop.yml")) out.lint = "bundle exec rubocop";
  return out;
}

function phpChecks(files: ProjectFiles): ProjectChecks {
  if (!files.exists("composer.json")) return {};
  return {
    tests: "test" in scriptsOf(readJson(files, "composer.json")) ? "composer test" : "vendor/bin/phpunit",
  };
}

function binTestChecks(files: ProjectFiles): ProjectChecks {
  return files.exists("bin/test") ? { tests: "bin/test" } : {};
}

/** Ecosystems in order of precedence: an earlier one's command wins for a kind. */
const ECOSYSTEMS = [
  nodeChecks,
  makeChecks,
  pythonChecks,
  goChecks,
  rustChecks,
  jvmChecks,
  dotnetChecks,
  rubyChecks,
  phpChecks,
  binTestChecks,
];

/**
 * The project's own check commands, from its files: package.json scripts (with the package manager its
 * lockfile implies), Makefile targets, Python, Go, Rust, Maven/Gradle, .NET, Ruby, PHP and `bin/test`, in that
 * order of precedence. Unreadable or malformed files are ignored.
 */
export function detectProjectChecks(files: ProjectFiles): ProjectChecks {
  // A port that throws is treated like one that finds nothing.
  const safe: ProjectFiles = {
    exists: (path) => attempt(() => files.exists(path), false),
    read: (path) => attempt(() => files.read(path), null),
    list: () => attempt(() => files.list?.() ?? [], []),
  };
  const out: ProjectChecks = {};
  for (const ecosystem of ECOSYSTEMS) {
    for (const [kind, command] of Object.entries(ecosystem(safe)) as [CheckKind, string][])
      out[kind] ??= command;
  }
  return out;
}

function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
