import { describe, expect, it } from "vitest";
import { OpenTurns, TURN_HOLD_MS } from "./open-turns.js";

describe("the open turns that hold the daemon", () => {
  it("opens at a prompt, closes at Stop or SessionEnd, per project and session", () => {
    const turns = new OpenTurns();
    expect(turns.holding(0)).toBe(false);
    turns.note("/a", "s1", { hook_event_name: "UserPromptSubmit" }, 0);
    turns.note("/b", "s1", { hook_event_name: "UserPromptSubmit" }, 0);
    turns.note("/a", "s1", { hook_event_name: "PreToolUse" }, 1);
    expect(turns.size).toBe(2);
    turns.note("/a", "s1", { hook_event_name: "Stop" }, 2);
    expect(turns.holding(3)).toBe(true);
    turns.note("/b", "s1", { hook_event_name: "SessionEnd" }, 4);
    expect(turns.holding(5)).toBe(false);
  });

  it("lets a turn that never closed go after TURN_HOLD_MS, and ignores input that names no event", () => {
    const turns = new OpenTurns();
    turns.note("/a", "s1", { hook_event_name: "UserPromptSubmit" }, 0);
    turns.note("/a", "s2", null, 0);
    turns.note("/a", "s3", "not an object", 0);
    expect(turns.holding(TURN_HOLD_MS - 1)).toBe(true);
    expect(turns.holding(TURN_HOLD_MS)).toBe(false);
    expect(turns.size).toBe(0);
  });
});
