/** The project's files as check detection reads them, and the stamp that tells when they changed. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ProjectFiles } from "./project-checks.js";

/** Largest project file read for check detection: a manifest, never a data file. */
const MAX_READ = 1024 * 1024;

/** The files of the project at `root`, as check detection reads them: small, relative, never throwing. */
export function projectFiles(root: string): ProjectFiles {
  return {
    exists: (path) => existsSync(join(root, path)),
    read: (path) => {
      try {
        const full = join(root, path);
        return statSync(full).size > MAX_READ ? null : readFileSync(full, "utf8");
      } catch {
        return null;
      }
    },
    list: () => {
      try {
        return readdirSync(root);
      } catch {
        return [];
      }
    },
  };
}

/**
 * The files check detection reads or looks for (project-checks.ts). A file added, removed or changed
 * among them changes the stamp; .NET solutions found by listing the root are the exception (a new one is
 * seen when the policy cache is next rebuilt).
 */
const WATCHED = [
  "package.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "bun.lock",
  "bun.lockb",
  "Makefile",
  "makefile",
  "GNUmakefile",
  "pyproject.toml",
  "setup.cfg",
  "setup.py",
  "tox.ini",
  "pytest.ini",
  "conftest.py",
  "requirements.txt",
  "manage.py",
  "tests/runtests.py",
  "ruff.toml",
  ".ruff.toml",
  ".flake8",
  "mypy.ini",
  "pyrightconfig.json",
  "go.mod",
  "Cargo.toml",
  "pom.xml",
  "mvnw",
  "build.gradle",
  "build.gradle.kts",
  "settings.gradle",
  "settings.gradle.kts",
  "gradlew",
  "Gemfile",
  ".rspec",
  "spec/spec_helper.rb",
  ".rubocop.yml",
  "composer.json",
  "bin/test",
];

/**
 * What the detected check commands depend on, cheaply (every in-process hook call pays for it): one listing
 * of the root, then the time and size of each watched file that is there, so a cached policy can tell when
 * it is stale.
 */
export function projectStamp(root: string): string {
  let names: Set<string>;
  try {
    names = new Set(readdirSync(root));
  } catch {
    return "";
  }
  return WATCHED.map((name) => {
    if (!names.has(name.split("/")[0] ?? name)) return "-";
    try {
      const s = statSync(join(root, name));
      return `${s.mtimeMs}:${s.size}`;
    } catch {
      return "-";
    }
  }).join(",");
}
