/** Tests of the prompt the reviewer model gets. */
import { describe, expect, it } from "vitest";
import { reviewPrompt } from "./prompt.js";

const input = {
  title: "task add: Implement add",
  acceptance: ["src/add.js exports add(a, b)", "add(0, x) is x"],
  diff: "+export const add = (a, b) => a + b;\n",
  filesChanged: ["src/add.js"],
  checks: [{ name: "add", command: "node --test", passed: true }],
};

describe("reviewPrompt", () => {
  it("shows the title, each criterion, the checks, the files and the diff between markers", () => {
    const prompt = reviewPrompt(input, 1_024);
    for (const part of [
      "Task: task add: Implement add",
      "- src/add.js exports add(a, b)\n- add(0, x) is x",
      "- add (passed): node --test",
      "- src/add.js",
      "<<<DIFF\n+export const add = (a, b) => a + b;\n\nDIFF>>>",
    ])
      expect(prompt).toContain(part);
  });

  it("cuts the diff at the byte bound and says so", () => {
    const prompt = reviewPrompt({ ...input, diff: "é".repeat(5_000) }, 1_024);
    expect(prompt).toContain("[reins: diff cut at 1024 of 10000 bytes]");
    expect(Buffer.byteLength(prompt)).toBeLessThan(2_500);
  });

  it("says when there are no criteria, checks or files", () => {
    const prompt = reviewPrompt({ ...input, acceptance: [], checks: [], filesChanged: [] }, 1_024);
    expect(prompt).toContain("(none written: judge the diff against the title)");
    expect(prompt.match(/- \(none\)/g)).toHaveLength(2);
  });
});
