/** Tests of the project's secrets and bearer tokens. */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { apiToken, bearerCheck, bearerToken, hookSecret, secretPath, tokenPath } from "./hook-secret.js";

const project = () => mkdtempSync(join(tmpdir(), "reins-secret-"));

describe("secrets", () => {
  it("refuses a token or hook secret file that is empty, short or spaced, naming it", () => {
    for (const text of ["", "\n", "abc\n", "x".repeat(31), `${"x".repeat(20)} ${"y".repeat(20)}`]) {
      const dir = project();
      mkdirSync(join(dir, ".reins"));
      writeFileSync(tokenPath(dir), text);
      writeFileSync(secretPath(dir), text);
      expect(() => apiToken(dir)).toThrow(
        /api-token does not hold a secret reins can trust \(at least 32 characters/,
      );
      expect(() => hookSecret(dir)).toThrow(/hook-secret does not hold a secret reins can trust/);
    }
  });

  it("creates one secret, mode 0600, that every process created at once agrees on", async () => {
    const dir = project();
    const module = pathToFileURL(
      join(import.meta.dirname, "..", "..", "..", "dist", "base", "config", "hook-secret.js"),
    ).href;
    const script = `import { hookSecret } from ${JSON.stringify(module)}; process.stdout.write(hookSecret(${JSON.stringify(dir)}));`;
    const values = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
            let out = "";
            child.stdout.on("data", (d: Buffer) => (out += d.toString()));
            child.on("close", () => resolve(out));
          }),
      ),
    );
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toMatch(/^[0-9a-f]{48}$/);
    expect(statSync(secretPath(dir)).mode & 0o777).toBe(0o600);
  });

  it("reads the bearer token however the header is spaced or cased, and never matches an empty one", () => {
    const secret = "s".repeat(48);
    expect(bearerToken(`Bearer ${secret}`)).toBe(secret);
    expect(bearerToken(`bearer   ${secret}  `)).toBe(secret);
    expect(bearerToken("Bearer \u00a0")).toBeNull();
    expect(bearerCheck("")("Bearer \u00a0")).toBe(false);
    expect(bearerCheck("x", secret)(`Bearer ${secret}`)).toBe(true);
    expect(bearerCheck(secret)(`Basic ${secret}`)).toBe(false);
  });

  it("checks headers against the secrets it was built with, each spelling of the scheme, never an empty one", () => {
    const people = "p".repeat(48);
    const agents = "a".repeat(48);
    const check = bearerCheck(people, "", agents);
    expect(check(`Bearer ${people}`)).toBe(true);
    expect(check(`bearer\t${agents} `)).toBe(true);
    expect(check(`Bearer ${people.slice(1)}`)).toBe(false);
    expect(check(`Bearer ${people}x`)).toBe(false);
    expect(check(`Basic ${people}`)).toBe(false);
    expect(check("Bearer ")).toBe(false);
    expect(check(undefined)).toBe(false);
    expect(bearerCheck("")("Bearer x")).toBe(false);
    expect(bearerCheck()(`Bearer ${people}`)).toBe(false);
    // A multi-byte token of as many characters as the secret is compared by its bytes, and refused.
    expect(bearerCheck("é".repeat(24) + "x".repeat(24))(`Bearer ${"e".repeat(24)}${"x".repeat(24)}`)).toBe(
      false,
    );
  });
});
