/** Tests of the MCP server's bounded request lines. */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { idOf, LineLimit } from "./line-limit.js";

/** Pushes `chunks` through a LineLimit of `max` bytes: the lines passed on, and the ones dropped. */
async function through(max: number, chunks: (string | Buffer)[]) {
  const dropped: [string | number | null, number][] = [];
  const limit = new LineLimit(max, (id, bytes) => dropped.push([id, bytes]));
  const passed: string[] = [];
  for await (const chunk of Readable.from(chunks.map((c) => Buffer.from(c))).pipe(limit))
    passed.push((chunk as Buffer).toString());
  return { passed: passed.join(""), dropped };
}

describe("the MCP server's request lines", () => {
  it("passes lines up to the limit whole, however they are cut, and drops a longer one with its id and size", async () => {
    const big = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"task":"${"x".repeat(100)}"}}}`;
    const { passed, dropped } = await through(64, [
      '{"id":1}\n{"id"',
      ":2}\n",
      big.slice(0, 30),
      big.slice(30, 90),
      `${big.slice(90)}\n{"id":3}`,
      "\n",
    ]);
    expect(passed).toBe('{"id":1}\n{"id":2}\n{"id":3}\n');
    expect(dropped).toEqual([[7, big.length]]);
  });

  it("finds the id before the params, else after them, else none", () => {
    expect(idOf('{"jsonrpc":"2.0","id":"a\\"b","method":"x","params":{"id":9', "")).toBe('a"b');
    expect(idOf('{"method":"x","params":{"arguments":{"id":9', '"}},"id":12,"jsonrpc":"2.0"}')).toBe(12);
    expect(idOf('{"method":"x","params":{', "}}")).toBeNull();
  });
});
