/** Timelines: a scripted session's events as an agent would cause them, for the demo, tests and benches. */
import type {
  BudgetResource,
  CompletionLevel,
  EventInput,
  ReinsEvent,
  ToolTouch,
  UsageRecorded,
} from "./reins-event.js";

/** FNV-1a, 32 bits, as 8 hex digits: a stable, pure hash for scripted events (the shell hashes real input with node:crypto). */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

export interface TimelineOptions {
  scope: string;
  /** Time of the first event, epoch ms. @default 0 */
  start?: number;
  /** Time between consecutive events, ms. @default 1000 */
  step?: number;
}

/** The result of a scripted tool call. */
export interface CallResult {
  ok?: boolean;
  output?: string;
  exitCode?: number;
}

/**
 * Writes a session's events the way an agent would cause them, with time moving on by `step` per event:
 * the scripted agents of `reins demo`, the tests and the benchmarks all use it.
 */
export class Timeline {
  readonly events: ReinsEvent[] = [];
  readonly scope: string;
  now: number;
  step: number;
  task: string | undefined;
  #calls = 0;

  constructor(options: TimelineOptions) {
    this.scope = options.scope;
    this.now = options.start ?? 0;
    this.step = options.step ?? 1000;
  }

  /** Appends an event at the current time, then moves the clock on. Returns it. */
  push(event: EventInput & { at?: number }): ReinsEvent {
    const full = {
      at: this.now,
      scope: this.scope,
      ...(this.task !== undefined ? { task: this.task } : {}),
      ...event,
    };
    this.events.push(full);
    this.now += this.step;
    return full;
  }

  /** Lets time pass without an event. */
  wait(ms: number): this {
    this.now += ms;
    return this;
  }

  started(agent = "scripted"): this {
    this.push({ kind: "session.started", agent });
    return this;
  }

  startTask(task: string, taskType?: string): this {
    this.task = task;
    this.push({ kind: "task.started", task, ...(taskType !== undefined ? { taskType } : {}) });
    return this;
  }

  endTask(status: "done" | "failed" | "canceled" = "done"): this {
    if (this.task !== undefined) this.push({ kind: "task.ended", task: this.task, status });
    return this;
  }

  /** A tool call: the request and, unless `result` is null (the call never ran), its completion. */
  call(tool: string, input: unknown, touch: Partial<ToolTouch> = {}, result: CallResult | null = {}): this {
    const inputHash = fnv1a(JSON.stringify(input));
    const callId = `call-${++this.#calls}`;
    const base = { tool, inputHash, callId, ...touch };
    this.push({ kind: "tool.requested", ...base });
    if (result === null) return this;
    const ok = result.ok ?? true;
    const output = result.output ?? (ok ? "ok" : "error");
    this.push({
      kind: "tool.completed",
      ...base,
      outcome: ok ? "success" : "failure",
      outputHash: fnv1a(output),
      ...(ok ? {} : { errorHash: fnv1a(output) }),
      ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
    });
    return this;
  }

  bash(command: string, result: CallResult = {}): this {
    return this.call("Bash", { command }, { command }, { exitCode: (result.ok ?? true) ? 0 : 1, ...result });
  }

  read(path: string, content = "content"): this {
    return this.call("Read", { file_path: path }, { reads: [path] }, { output: content });
  }

  edit(path: string, change: string, linesChanged = 5): this {
    return this.call("Edit", { file_path: path, change }, { writes: [path], linesChanged });
  }

  usage(tokens: Omit<UsageRecorded, "kind" | "at" | "scope">): this {
    this.push({ kind: "usage.recorded", ...tokens });
    return this;
  }

  verify(
    name: string,
    passed: boolean,
    extra: {
      score?: number;
      command?: string;
      flagged?: string[];
      fingerprint?: string;
      failing?: number;
    } = {},
  ): this {
    this.push({ kind: "verification.ran", name, passed, tier: "fast", ...extra });
    return this;
  }

  iteration(outcome: "success" | "failure"): this {
    this.push({ kind: "iteration.ended", outcome });
    return this;
  }

  claim(level: CompletionLevel = "session"): this {
    this.push({ kind: "completion.claimed", level });
    return this;
  }

  extend(resource: BudgetResource, amount: number, by = "tester", reason = "scripted"): this {
    this.push({ kind: "human.budget_extended", resource, amount, by, reason });
    return this;
  }

  ack(by = "tester"): this {
    this.push({ kind: "human.circuit_acknowledged", by });
    return this;
  }

  resetCircuit(by = "tester"): this {
    this.push({ kind: "human.circuit_reset", by });
    return this;
  }

  confirm(by = "tester"): this {
    this.push({ kind: "human.confirmed", by });
    return this;
  }

  ended(): this {
    this.push({ kind: "session.ended" });
    return this;
  }
}

/** A new timeline for `scope`. */
export function timeline(options: TimelineOptions | string): Timeline {
  return new Timeline(typeof options === "string" ? { scope: options } : options);
}
