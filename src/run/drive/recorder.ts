/** Record and replay of a run's outside interactions: every one passes through `io` under its action's key. */
import { ReinsError } from "../../base/core/errors.js";
import type { ReadTrace, TraceWriter } from "./run-trace.js";

/** What an outside interaction's failure is recorded as, so a replay fails the same way. */
interface Failed {
  error: { code: string; message: string };
}

/**
 * Carries out (live) or serves back (replay) the outside interactions of a run. Live, each result is
 * recorded as a trace line and returned as its JSON round trip, so the live run sees exactly what a replay
 * will. Replay, each call takes the next result recorded for its key and names the divergence when the
 * run asks for something else.
 */
export interface Recorder {
  readonly replaying: boolean;
  io<T>(key: string, op: string, live: () => Promise<T>): Promise<T>;
}

function failed(error: unknown): Failed {
  if (ReinsError.is(error)) return { error: { code: error.code, message: error.message } };
  return { error: { code: "io_failed", message: error instanceof Error ? error.message : String(error) } };
}

function settle<T>(result: unknown): T {
  if (result !== null && typeof result === "object" && "error" in result) {
    const { code, message } = (result as Failed).error;
    throw new ReinsError(code as never, message);
  }
  return result as T;
}

/** Records every interaction into the trace as it happens. */
export function liveRecorder(trace: TraceWriter): Recorder {
  return {
    replaying: false,
    async io<T>(key: string, op: string, live: () => Promise<T>): Promise<T> {
      let result: unknown;
      try {
        const value = await live();
        result = value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
      } catch (error) {
        result = failed(error);
      }
      trace.write({ t: "io", key, op, result });
      return settle<T>(result);
    },
  };
}

/** The result a replay asks for that the trace does not have: the run took another path than recorded. */
export class DivergenceError extends ReinsError {
  constructor(message: string) {
    super("invalid_trace", message);
  }
}

/** Serves recorded results back in order, per action key; nothing outside is touched. */
export function replayRecorder(trace: ReadTrace): Recorder {
  const next = new Map<string, number>();
  return {
    replaying: true,
    io<T>(key: string, op: string): Promise<T> {
      const list = trace.io.get(key) ?? [];
      const i = next.get(key) ?? 0;
      const line = list[i];
      if (line === undefined) {
        // An action cut short by a crash has fewer results than its replay asks for; if the replay does
        // not go on without it (the resume dropped it), it waits forever and nothing reads it.
        return new Promise<T>(() => undefined);
      }
      if (line.op !== op)
        return Promise.reject(
          new DivergenceError(
            `action ${key}: recorded ${line.op} as its interaction ${i + 1}, replay asked for ${op}`,
          ),
        );
      next.set(key, i + 1);
      // settle throws the recorded failure; inside a promise it becomes the rejection.
      return new Promise<T>((resolve) => resolve(settle<T>(line.result)));
    },
  };
}
