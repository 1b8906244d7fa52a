import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { projectStateDir } from "./install-record.js";
import {
  isLinkedProject,
  linkReinsDir,
  linkedReinsDir,
  reinsLinkIntact,
  restoreReinsLink,
  trustedSecretPath,
} from "./reins-link.js";

let dir: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-link-")));
  root = join(dir, "repo");
  mkdirSync(root);
  execFileSync("git", ["init", "-q"], { cwd: root });
  env = { HOME: join(dir, "home") };
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("a project's .reins linked into the state folder", () => {
  it("is made as a link to a private folder of the state folder that names its project, and git does not list it", () => {
    expect(linkReinsDir(root, env, true)).toBe(true);
    const target = linkedReinsDir(root, env);
    expect(target.startsWith(join(dir, "home", ".local", "state", "reins", "projects"))).toBe(true);
    expect(readlinkSync(join(root, ".reins"))).toBe(target);
    expect(lstatSync(target).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(projectStateDir(root, env), "root"), "utf8")).toBe(`${root}\n`);
    expect(reinsLinkIntact(root, env)).toBe(true);
    expect(readFileSync(join(root, ".git", "info", "exclude"), "utf8")).toContain("\n/.reins\n");
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: root, encoding: "utf8" })).toBe("");
    // Made once: a second call changes nothing.
    expect(linkReinsDir(root, env, true)).toBe(true);
    expect(readFileSync(join(root, ".git", "info", "exclude"), "utf8").split("/.reins").length).toBe(2);
  });

  it("is not made without `make` (a project's own hooks), nor over a .reins of the project's own", () => {
    expect(linkReinsDir(root, env, false)).toBe(false);
    mkdirSync(join(root, ".reins"));
    expect(linkReinsDir(root, env, true)).toBe(false);
    expect(lstatSync(join(root, ".reins")).isDirectory()).toBe(true);
    expect(isLinkedProject(root, env)).toBe(false);
    expect(restoreReinsLink(root, env, 1)).toEqual({ kind: "intact" });
  });

  it("gets its target back, empty, when the state folder was removed", () => {
    linkReinsDir(root, env, true);
    rmSync(join(dir, "home"), { recursive: true });
    expect(linkReinsDir(root, env, false)).toBe(true);
    expect(reinsLinkIntact(root, env)).toBe(true);
  });

  it("is put back when removed, and said", () => {
    linkReinsDir(root, env, true);
    rmSync(join(root, ".reins"));
    const repair = restoreReinsLink(root, env, 5);
    expect(repair).toMatchObject({ kind: "restored", found: "removed" });
    expect(repair.kind === "restored" && repair.line).toContain(
      `${join(root, ".reins")}, the link to this project's store`,
    );
    expect(reinsLinkIntact(root, env)).toBe(true);
    expect(restoreReinsLink(root, env, 6)).toEqual({ kind: "intact" });
  });

  it("is put back when replaced, what replaced it moved aside, and its secret never trusted", () => {
    linkReinsDir(root, env, true);
    const real = "r".repeat(48);
    writeFileSync(join(root, ".reins", "hook-secret"), `${real}\n`);
    rmSync(join(root, ".reins"));
    mkdirSync(join(root, ".reins"));
    writeFileSync(join(root, ".reins", "hook-secret"), `${"f".repeat(48)}\n`);
    // Before the link is put back, the secret is still read from the state folder.
    expect(readFileSync(trustedSecretPath(root, env), "utf8").trim()).toBe(real);
    const repair = restoreReinsLink(root, env, 7);
    expect(repair).toMatchObject({
      kind: "restored",
      found: "replaced",
      aside: join(root, ".reins.replaced-7"),
    });
    expect(readFileSync(join(root, ".reins.replaced-7", "hook-secret"), "utf8").trim()).toBe("f".repeat(48));
    expect(readFileSync(join(root, ".reins", "hook-secret"), "utf8").trim()).toBe(real);
    // A link to somewhere else is a replacement too.
    rmSync(join(root, ".reins"));
    execFileSync("ln", ["-s", dir, join(root, ".reins")]);
    expect(restoreReinsLink(root, env, 8)).toMatchObject({ kind: "restored", found: "replaced" });
    expect(
      readdirSync(root)
        .filter((n) => n.startsWith(".reins.replaced-"))
        .sort(),
    ).toEqual([".reins.replaced-7", ".reins.replaced-8"]);
  });

  it("trusts the project's own .reins/hook-secret in a project that is not linked", () => {
    expect(trustedSecretPath(root, env)).toBe(join(root, ".reins", "hook-secret"));
  });

  it("is kept out of a git worktree's listing through the repository's common exclude file", () => {
    execFileSync(
      "git",
      ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"],
      {
        cwd: root,
      },
    );
    const worktree = join(dir, "wt");
    execFileSync("git", ["worktree", "add", "-q", worktree], { cwd: root });
    expect(linkReinsDir(worktree, env, true)).toBe(true);
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: worktree, encoding: "utf8" })).toBe("");
  });
});
