import { describe, expect, it } from "vitest";
import { counted, plural } from "./plural.js";

describe("counted", () => {
  it("says one thing in the singular and every other count in the plural", () => {
    expect(counted(1, "scope")).toBe("1 scope");
    expect(counted(0, "scope")).toBe("0 scopes");
    expect(counted(2, "turn")).toBe("2 turns");
    expect(counted(1204, "event")).toBe("1,204 events");
  });

  it("takes an irregular plural", () => {
    expect(counted(3, "dependency edge")).toBe("3 dependency edges");
    expect(counted(2, "entry", "entries")).toBe("2 entries");
    expect(plural(1, "entry", "entries")).toBe("entry");
  });
});
