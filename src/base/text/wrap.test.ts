import { describe, expect, it } from "vitest";
import { wrap } from "./wrap.js";

describe("wrap", () => {
  it("breaks at spaces, never inside a word, and indents the lines after the first", () => {
    const text = "The same Bash call was made 5 times in a row, failing the same way each time.";
    const wrapped = wrap(text, 30, "    ");
    expect(wrapped).toBe(
      "The same Bash call was made 5\n    times in a row, failing\n    the same way each time.",
    );
    for (const line of wrapped.split("\n")) expect(line.length).toBeLessThanOrEqual(30);
    expect(wrapped.replace(/\n {4}/g, " ")).toBe(text);
  });

  it("keeps a word longer than a line whole on a line of its own", () => {
    expect(wrap("see /a/very/long/path/that/does/not/fit for it", 12)).toBe(
      "see\n/a/very/long/path/that/does/not/fit\nfor it",
    );
  });

  it("leaves a short text as it is", () => {
    expect(wrap("short", 80, "  ")).toBe("short");
    expect(wrap("", 80)).toBe("");
  });
});
