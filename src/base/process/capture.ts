/**
 * Bounded capture of a child's output: a check or an agent may print without end, and what is kept goes
 * into the run's evidence and trace, so memory and trace size stay bounded whatever it does.
 */

/** Keeps the last `max` bytes written and counts what it dropped. */
export class TailBuffer {
  #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
    while (this.#chunks.length > 1 && this.#kept - (this.#chunks[0]?.length ?? 0) >= this.max) {
      const first = this.#chunks.shift() ?? Buffer.alloc(0);
      this.#kept -= first.length;
      this.#dropped += first.length;
    }
  }

  /** The kept bytes (at most `max`) and how many bytes before them were dropped. */
  bytes(): { bytes: Buffer; dropped: number } {
    const all = Buffer.concat(this.#chunks);
    const extra = Math.max(0, all.length - this.max);
    return { bytes: all.subarray(extra), dropped: this.#dropped + extra };
  }

  /** The kept text; when bytes were dropped, a first line `[… N bytes cut]` says how many. */
  text(): string {
    const { bytes, dropped } = this.bytes();
    if (dropped === 0) return bytes.toString("utf8");
    const start = charStart(bytes);
    return `[… ${dropped + start} bytes cut]\n${bytes.subarray(start).toString("utf8")}`;
  }
}

/**
 * Keeps the first `head` bytes and the last `tail` bytes. When more was written, the text is the head, a
 * line `[… N bytes cut]`, then the tail: a JSONL reader skips the broken lines at the cut and still finds
 * the first events and the final result.
 */
export class HeadTailBuffer {
  #head: Buffer[] = [];
  #headBytes = 0;
  readonly #tail: TailBuffer;

  constructor(
    private readonly head: number,
    tail: number,
  ) {
    this.#tail = new TailBuffer(tail);
  }

  push(chunk: Buffer): void {
    const room = this.head - this.#headBytes;
    if (room > 0) {
      const part = chunk.subarray(0, room);
      this.#head.push(part);
      this.#headBytes += part.length;
      chunk = chunk.subarray(part.length);
    }
    if (chunk.length > 0) this.#tail.push(chunk);
  }

  text(): string {
    const head = Buffer.concat(this.#head);
    const { bytes, dropped } = this.#tail.bytes();
    if (dropped === 0) return Buffer.concat([head, bytes]).toString("utf8");
    const start = charStart(bytes);
    return `${head.toString("utf8")}\n[… ${dropped + start} bytes cut]\n${bytes.subarray(start).toString("utf8")}`;
  }
}

/** Skips UTF-8 continuation bytes a cut left at the start, so the text starts on a character. */
function charStart(bytes: Buffer): number {
  let start = 0;
  while (start < bytes.length && start < 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return start;
}
