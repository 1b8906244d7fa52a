/** Tests of boundary globs: which changed paths touch a boundary. */
import { describe, expect, it } from "vitest";
import { boundaryMatcher, touchesBoundary } from "./boundaries.js";

describe("touchesBoundary", () => {
  it("matches files against any of the globs", () => {
    const globs = ["src/api/**", "**/*.proto", "package.json"];
    expect(touchesBoundary(["src/util/x.ts", "src/api/routes/users.ts"], globs)).toBe(true);
    expect(touchesBoundary(["schemas/v1/user.proto"], globs)).toBe(true);
    expect(touchesBoundary(["package.json"], globs)).toBe(true);
    expect(touchesBoundary(["src/util/x.ts", "packages/a/package.json"], globs)).toBe(false);
  });

  it("includes dot files and dot directories", () => {
    expect(touchesBoundary([".github/workflows/ci.yml"], [".github/**"])).toBe(true);
    expect(touchesBoundary(["config/.env.production"], ["config/*"])).toBe(true);
    expect(touchesBoundary(["src/.hidden/schema.sql"], ["**/*.sql"])).toBe(true);
  });

  it("touches nothing without globs or without files", () => {
    expect(touchesBoundary(["anything"], [])).toBe(false);
    expect(touchesBoundary([], ["**"])).toBe(false);
  });

  it("accepts ./-prefixed and backslashed paths", () => {
    const match = boundaryMatcher(["db/migrations/**"]);
    expect(match("./db/migrations/001.sql")).toBe(true);
    expect(match("db\\migrations\\002.sql")).toBe(true);
  });
});
