import { describe, expect, it } from "vitest";
import { resolveScope } from "./scope-name.js";

const stored = ["session:4f2a9c1e-77b0", "session:demo-stuck-abc", "task:build", "pool:team"];

describe("resolveScope", () => {
  it("takes a stored scope as it is, and a bare session id as its session's scope", () => {
    expect(resolveScope("task:build", stored)).toBe("task:build");
    expect(resolveScope("4f2a9c1e-77b0", stored)).toBe("session:4f2a9c1e-77b0");
  });

  it("names the nearest stored scope for a mistyped one, whole or bare", () => {
    expect(() => resolveScope("session:demo-stuk-abc", stored)).toThrow(
      'no scope "session:demo-stuk-abc" in the store; did you mean `session:demo-stuck-abc`? (see `reins sessions`)',
    );
    expect(() => resolveScope("4f2a9c1e-77b1", stored)).toThrow("did you mean `session:4f2a9c1e-77b0`?");
  });

  it("suggests nothing when no stored scope is near", () => {
    expect(() => resolveScope("session:zzzzzzzzzzzz", stored)).toThrow(
      'no scope "session:zzzzzzzzzzzz" in the store (see `reins sessions`)',
    );
    expect(() => resolveScope("anything", [])).toThrow('no scope "anything" in the store');
  });
});
