/** Tests of a markdown spec's sections and their normalised text. */
import { describe, expect, it } from "vitest";
import { normalizeSection } from "./normalize.js";
import { findSection, parseSpec, sectionsUnder } from "./sections.js";

const SPEC = `---
name: accounts
description: Who may use the service
---

Preamble, in no section.

# Accounts

Intro.

## Sign up

POST /signup creates a user.

~~~md
# Not a heading
~~~

### Errors

409 when the email is taken.

## Log in

POST /login.

### Errors

401 on a bad password.

## Log in
`;

describe("spec sections", () => {
  it("reads YAML front-matter as data and never as a section", () => {
    const spec = parseSpec(SPEC);
    expect(spec.frontMatter).toEqual({ name: "accounts", description: "Who may use the service" });
    expect(spec.frontMatterError).toBeNull();
    expect(spec.sections[0]?.heading).toBe("Accounts");
  });

  it("names a section by its heading path, and a repeated path by its place: (2), (3)...", () => {
    expect(parseSpec(SPEC).sections.map((s) => s.id)).toEqual([
      "Accounts",
      "Accounts > Sign up",
      "Accounts > Sign up > Errors",
      "Accounts > Log in",
      "Accounts > Log in > Errors",
      "Accounts > Log in (2)",
    ]);
  });

  it("keeps its own text to the next heading of any level, and its whole text to the next of its level or above", () => {
    const signUp = parseSpec(SPEC).sections[1]!;
    expect(signUp.path).toEqual(["Accounts", "Sign up"]);
    expect(signUp.parent).toBe("Accounts");
    expect(normalizeSection(signUp.own)).toBe(
      "## Sign up\n\nPOST /signup creates a user.\n\n~~~md\n# Not a heading\n~~~",
    );
    expect(signUp.text).toContain("409 when the email is taken.");
    expect(signUp.text).not.toContain("POST /login");
  });

  it("finds a section by heading text or path, case-insensitively, the first in document order", () => {
    const { sections } = parseSpec(SPEC);
    expect(findSection(sections, "errors")?.id).toBe("Accounts > Sign up > Errors");
    expect(findSection(sections, "accounts>log in > ERRORS")?.id).toBe("Accounts > Log in > Errors");
    expect(findSection(sections, "Accounts > Log in (2)")?.id).toBe("Accounts > Log in (2)");
    expect(findSection(sections, "Billing")).toBeUndefined();
  });

  it("lists a section with everything nested in it", () => {
    const { sections } = parseSpec(SPEC);
    expect(sectionsUnder(sections, sections[0]!).map((s) => s.id)).toHaveLength(6);
    expect(sectionsUnder(sections, sections[3]!).map((s) => s.id)).toEqual([
      "Accounts > Log in",
      "Accounts > Log in > Errors",
    ]);
  });

  it("reports front-matter that is not YAML, and still reads the sections", () => {
    const spec = parseSpec("---\nname: [unclosed\n---\n\n# A\n");
    expect(spec.frontMatter).toBeNull();
    expect(spec.frontMatterError).toMatch(/./);
    expect(spec.sections.map((s) => s.id)).toEqual(["A"]);
  });

  it("gives a heading written like a disambiguated one a number of its own", () => {
    const ids = parseSpec("# A\n\n# A (2)\n\n# A\n").sections.map((s) => s.id);
    expect(ids).toEqual(["A", "A (2)", "A (3)"]);
  });
});

describe("normalizeSection", () => {
  it("unifies line endings, drops trailing whitespace, collapses blank runs and trims blank edges", () => {
    expect(normalizeSection("\r\n\n# A  \r\n\r\n\r\n\ttext\t\r\r\rmore\n\n")).toBe("# A\n\n\ttext\n\nmore");
  });
});
