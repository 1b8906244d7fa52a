/** Tests of the hook protocol's header encoding, as the clients write it and the daemon reads it. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeHeaderValue,
  decodeProjectEnv,
  encodeHeaderValue,
  encodeProjectEnv,
  isProjectVariable,
} from "./protocol.js";

describe("the hook protocol's headers", () => {
  it("reads back any text it encodes, and encodes to header-safe ASCII", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        fc.pre(!text.includes("\0"));
        const encoded = encodeHeaderValue(text);
        expect(encoded).toMatch(/^[A-Za-z0-9\-._~/%]*$/);
        expect(decodeHeaderValue(encoded)).toBe(text);
      }),
      { seed: 2411, numRuns: 300 },
    );
  });

  it("reads a path sent as raw UTF-8 bytes, as Node hands them over (Latin-1)", () => {
    const path = "/home/zoë/projet été";
    expect(decodeHeaderValue(Buffer.from(path, "utf8").toString("latin1"))).toBe(path);
  });

  it("refuses a value with a NUL or with bytes that are not UTF-8", () => {
    expect(decodeHeaderValue("/a%00b")).toBeNull();
    expect(decodeHeaderValue("/a%FFb")).toBeNull();
  });

  it("forwards a project's REINS_* variables and none of the daemon's own", () => {
    const header = encodeProjectEnv({
      REINS_STORE: "redis://h:1/0?x=a&b",
      REINS_BUDGET_SESSION_TOKENS: "900",
      REINS_RUNTIME_DIR: "/run/x",
      REINS_DAEMON_IDLE: "5s",
      PATH: "/bin",
    });
    expect({ ...decodeProjectEnv(header) }).toEqual({
      REINS_STORE: "redis://h:1/0?x=a&b",
      REINS_BUDGET_SESSION_TOKENS: "900",
    });
    expect(isProjectVariable("REINS_PORT")).toBe(false);
  });

  it("drops names that are not project variables, such as __proto__, without touching any prototype", () => {
    const env = decodeProjectEnv("__proto__=x&constructor=y&REINS_STORE=memory");
    expect(env).not.toBeNull();
    expect(Object.keys(env!)).toEqual(["REINS_STORE"]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.getPrototypeOf(env)).toBeNull();
  });

  it("refuses a malformed env header as a whole", () => {
    expect(decodeProjectEnv("REINS_STORE")).toBeNull();
    expect(decodeProjectEnv("=memory")).toBeNull();
    expect(decodeProjectEnv("REINS_STORE=%00")).toBeNull();
    expect(decodeProjectEnv("")).toEqual({});
  });
});
