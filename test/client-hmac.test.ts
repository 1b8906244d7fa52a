/**
 * The hook client's own SHA-256 and HMAC-SHA256 (src/client/hmac-sha256.h), compiled with the system C
 * compiler and held to node:crypto on the inputs where padding goes wrong: empty, the 55/56/63/64/65-byte
 * block edges, long inputs, keys of every length around the block size, fed in chunks of many sizes.
 */
import { execFileSync } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "reins-hmac-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const driver = join(dir, "hmac-cli");
const compiled = (() => {
  for (const cc of ["cc", "gcc", "clang"]) {
    try {
      execFileSync(
        cc,
        [
          "-O2",
          "-Wall",
          "-Wextra",
          "-Werror",
          "-o",
          driver,
          join(import.meta.dirname, "support", "hmac-cli.c"),
        ],
        {
          stdio: "ignore",
        },
      );
      return true;
    } catch {
      // the next compiler
    }
  }
  return false;
})();

const sha = (message: Buffer, chunk: number) =>
  execFileSync(driver, ["sha", String(chunk)], { input: message })
    .toString()
    .trim();
let keys = 0;
const hmac = (key: Buffer, message: Buffer, chunk: number) => {
  const file = join(dir, `key-${keys++}`);
  writeFileSync(file, key);
  return execFileSync(driver, ["hmac", String(chunk), file], { input: message })
    .toString()
    .trim();
};

/** Deterministic bytes (so a failure names an input that can be made again), with every byte value. */
const bytes = (length: number, seed = 1) =>
  Buffer.from(Array.from({ length }, (_, i) => (i * 31 + seed * 7) & 0xff));

const EDGES = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 100_000, 1_000_003];

describe.skipIf(!compiled)("the hook client's SHA-256 and HMAC-SHA256", () => {
  it("hashes as node:crypto does at every block edge, whole and in chunks", () => {
    for (const length of EDGES) {
      const message = bytes(length, length);
      const want = createHash("sha256").update(message).digest("hex");
      for (const chunk of length > 10_000 ? [4096, 65_536] : [1, 7, 63, 64, 65, 1_000_000])
        expect(sha(message, chunk), `${length} bytes in chunks of ${chunk}`).toBe(want);
    }
  });

  it("hashes the FIPS 180-4 examples to their published digests", () => {
    expect(sha(Buffer.from("abc"), 1)).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha(Buffer.from(""), 1)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha(Buffer.from("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), 5)).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("signs as node:crypto does for keys shorter than, as long as and longer than a block", () => {
    for (const keyLength of [0, 1, 20, 32, 63, 64, 65, 100, 131, 1000]) {
      for (const length of [0, 1, 55, 56, 63, 64, 65, 200, 70_000]) {
        const key = bytes(keyLength, keyLength + 3);
        const message = bytes(length, length + 11);
        const want = createHmac("sha256", key).update(message).digest("hex");
        expect(hmac(key, message, length > 1000 ? 4096 : 13), `key ${keyLength}, message ${length}`).toBe(
          want,
        );
      }
    }
  });

  it("signs random keys and messages as node:crypto does", () => {
    for (let i = 0; i < 40; i++) {
      const key = randomBytes(1 + ((i * 37) % 150));
      const message = randomBytes((i * 997) % 5000);
      const chunk = 1 + ((i * 13) % 97);
      expect(hmac(key, message, chunk), `key ${key.toString("hex")}`).toBe(
        createHmac("sha256", key).update(message).digest("hex"),
      );
    }
  });

  it("signs the RFC 4231 test cases to their published MACs", () => {
    expect(hmac(Buffer.alloc(20, 0x0b), Buffer.from("Hi There"), 3)).toBe(
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    );
    expect(hmac(Buffer.from("Jefe"), Buffer.from("what do ya want for nothing?"), 64)).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    expect(
      hmac(Buffer.alloc(131, 0xaa), Buffer.from("Test Using Larger Than Block-Size Key - Hash Key First"), 1),
    ).toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  });
});
