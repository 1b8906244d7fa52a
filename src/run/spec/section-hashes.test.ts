/** Tests of a spec's section hashes: which sections changed since a run started. */
import { describe, expect, it } from "vitest";
import { planNode } from "#test/plans.js";
import type { PlanNode } from "../control/types.js";
import { hashedSpec } from "./read.js";
import { sectionHashesOf, specChange, specFiles } from "./section-hashes.js";

const node = (id: string, spec?: PlanNode["spec"]): PlanNode =>
  planNode(id, spec !== undefined ? { spec } : {});

const SPEC = "# Accounts\n\n## Sign up\n\nPOST /signup.\n\n### Errors\n\n409.\n\n## Log in\n\nPOST /login.\n";

const files = (markdown: string) => new Map([["spec.md", hashedSpec("spec.md", markdown).sections]]);

describe("section hashes", () => {
  const nodes = [
    node("signup", { file: "./spec.md", sections: ["Sign up"] }),
    node("login", { file: "spec.md", sections: ["accounts > log in"] }),
    node("errors", { file: "spec.md", sections: ["Errors"] }),
    node("plain"),
  ];

  it("names each spec file once, however it is spelled", () => {
    expect(specFiles(nodes)).toEqual(["spec.md"]);
  });

  it("holds every named section and its subsections, with the nodes naming each", () => {
    const hashes = sectionHashesOf(nodes, files(SPEC));
    expect(Object.fromEntries(Object.entries(hashes).map(([k, v]) => [k, v.by]))).toEqual({
      "spec.md#Accounts > Sign up": ["signup"],
      "spec.md#Accounts > Sign up > Errors": ["signup", "errors"],
      "spec.md#Accounts > Log in": ["login"],
    });
  });

  it("tells a changed subsection with every node naming it or its parent, and nothing else", () => {
    const before = sectionHashesOf(nodes, files(SPEC));
    const after = sectionHashesOf(nodes, files(SPEC.replace("409.", "409 Conflict.")));
    expect(specChange(before, after)).toEqual({
      sections: ["spec.md#Accounts > Sign up > Errors"],
      nodes: ["signup", "errors"],
    });
    expect(specChange(before, sectionHashesOf(nodes, files(`${SPEC}\r\n\r\n`)))).toBeNull();
  });

  it("tells a section that appeared or vanished", () => {
    const before = sectionHashesOf(nodes, files(SPEC));
    const renamed = sectionHashesOf(nodes, files(SPEC.replace("## Log in", "## Sign in")));
    expect(specChange(before, renamed)).toEqual({
      sections: ["spec.md#Accounts > Log in"],
      nodes: ["login"],
    });
    expect(specChange(renamed, before)).toEqual({
      sections: ["spec.md#Accounts > Log in"],
      nodes: ["login"],
    });
    const added = sectionHashesOf(
      nodes,
      files(SPEC.replace("## Log in", "### Limits\n\nTen a day.\n\n## Log in")),
    );
    expect(specChange(before, added)).toEqual({
      sections: ["spec.md#Accounts > Sign up > Limits"],
      nodes: ["signup"],
    });
  });

  it("counts an unreadable file as naming no section", () => {
    const before = sectionHashesOf(nodes, files(SPEC));
    expect(specChange(before, sectionHashesOf(nodes, new Map()))?.nodes).toEqual([
      "signup",
      "errors",
      "login",
    ]);
  });
});
