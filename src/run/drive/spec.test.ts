/** Tests of reading the spec sections a task names. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSpecSections, specSections } from "./spec.js";

const SPEC = `# Accounts

Intro.

## Sign up

POST /signup creates a user.

\`\`\`md
## Not a heading
\`\`\`

### Errors

409 when the email is taken.

## Log in

POST /login.
`;

describe("spec sections", () => {
  it("run from a heading to the next heading of its level or above, nested ones included", () => {
    const sections = specSections(SPEC);
    expect(sections.map((s) => s.heading)).toEqual(["Accounts", "Sign up", "Errors", "Log in"]);
    const signUp = sections[1]!.text;
    expect(signUp).toContain("POST /signup");
    expect(signUp).toContain("409 when the email is taken.");
    expect(signUp).not.toContain("POST /login");
  });

  it("never take a heading inside a code fence for a section", () => {
    expect(specSections(SPEC).map((s) => s.heading)).not.toContain("Not a heading");
  });

  it("are read by name, case-insensitively, and a missing one is named", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-spec-"));
    writeFileSync(join(dir, "spec.md"), SPEC);
    const [section] = await readSpecSections(dir, { file: "spec.md", sections: ["log in"] });
    expect(section?.text).toBe("## Log in\n\nPOST /login.\n");
    await expect(readSpecSections(dir, { file: "spec.md", sections: ["Billing"] })).rejects.toThrow(
      'spec.md has no section "Billing"',
    );
    await expect(readSpecSections(dir, { file: "nope.md", sections: [] })).rejects.toThrow(
      "cannot read the spec nope.md: ENOENT",
    );
  });
});
