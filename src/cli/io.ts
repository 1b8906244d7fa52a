/** The CLI's input and output: the real process's streams, or lines kept in memory for tests. */

/** Where a command reads and writes, so the CLI runs the same in a terminal and in tests. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Colour output: on for a terminal unless NO_COLOR, forced by FORCE_COLOR. */
  color: boolean;
  /** Everything on standard input. */
  stdin(): Promise<Buffer>;
  /** Whether standard output is a terminal (progress redraws in place) rather than a pipe or file. */
  terminal?: boolean;
  /** The terminal's width in columns, when standard output is one. */
  columns?: number;
}

/** The real process's streams and environment. */
export function processIo(): Io {
  const env = process.env;
  const color =
    env.FORCE_COLOR !== undefined
      ? env.FORCE_COLOR !== "0"
      : process.stdout.isTTY && env.NO_COLOR === undefined;
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env,
    color,
    terminal: process.stdout.isTTY,
    ...(process.stdout.isTTY && process.stdout.columns > 0 ? { columns: process.stdout.columns } : {}),
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
  };
}

/** Lines written to an Io, for tests. */
export function memoryIo(
  options: Partial<Omit<Io, "stdout" | "stderr" | "stdin">> & { input?: Buffer | string } = {},
): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? {},
    color: options.color ?? false,
    stdin: () => Promise.resolve(Buffer.from(options.input ?? "")),
  };
}
