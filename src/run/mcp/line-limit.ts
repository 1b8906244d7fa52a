/**
 * The MCP server's stdin, a line at a time and each line bounded: the SDK's stdio transport closes the
 * server, saying nothing, on a line over its buffer (10 MB), so a request over `max` bytes is taken out
 * here and answered with a JSON-RPC error instead, and the server reads on.
 */
import { Transform, type TransformCallback } from "node:stream";

/** How much of each end of a dropped line is kept to find its id. */
const EDGE = 512;

/** The request id in the text of a JSON-RPC message's ends: before its params, or else after them. */
export function idOf(head: string, tail: string): string | number | null {
  const pattern = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")/g;
  const beforeParams = head.split('"params"')[0] ?? "";
  const found = [...beforeParams.matchAll(pattern)].at(0) ?? [...tail.matchAll(pattern)].at(-1);
  if (found?.[1] === undefined) return null;
  try {
    return JSON.parse(found[1]) as string | number;
  } catch {
    return null;
  }
}

/**
 * A stream that passes whole lines on and drops any line over `max` bytes, calling `dropped` with its id
 * (when its ends hold one) and its size.
 */
export class LineLimit extends Transform {
  readonly #max: number;
  readonly #dropped: (id: string | number | null, bytes: number) => void;
  #parts: Buffer[] = [];
  #size = 0;
  /** While a line over the limit is being skipped: its head, its tail so far, and its size. */
  #skipping: { head: string; tail: Buffer; bytes: number } | null = null;

  constructor(max: number, dropped: (id: string | number | null, bytes: number) => void) {
    super();
    this.#max = max;
    this.#dropped = dropped;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    for (let start = 0; start < chunk.length;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      const piece = chunk.subarray(start, end);
      start = end;
      if (this.#skipping !== null) {
        this.#skipping.tail = Buffer.concat([this.#skipping.tail, piece]).subarray(-EDGE);
        this.#skipping.bytes += piece.length;
      } else if (this.#size + piece.length > this.#max + 1) {
        // Over the limit (its newline aside): skip the line, keeping its ends to answer it by its id.
        const held = Buffer.concat([...this.#parts, piece]);
        this.#skipping = {
          head: held.subarray(0, EDGE).toString("utf8"),
          tail: held.subarray(-EDGE),
          bytes: held.length,
        };
        this.#parts = [];
        this.#size = 0;
      }
      if (this.#skipping !== null) {
        if (newline !== -1) {
          const { head, tail, bytes } = this.#skipping;
          this.#skipping = null;
          this.#dropped(idOf(head, tail.toString("utf8")), bytes - 1);
        }
        continue;
      }
      this.#parts.push(piece);
      this.#size += piece.length;
      if (newline !== -1) {
        this.push(Buffer.concat(this.#parts));
        this.#parts = [];
        this.#size = 0;
      }
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#skipping === null && this.#size > 0) this.push(Buffer.concat(this.#parts));
    done();
  }
}
