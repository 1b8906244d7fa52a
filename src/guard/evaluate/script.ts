/** Agent sessions written as the Claude Code hook calls they would make, for benchmarks and tests. */
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import type { LoggedCall, LoggedRun } from "../logs/run.js";

/**
 * Writes an agent session as the Claude Code hook calls it would make: what the efficacy benchmark's
 * scripted sessions and tests are made of. Time moves on by `step` per tool call (a model turn), so rules
 * about time see what a real session shows.
 */
export class SessionScript {
  readonly calls: LoggedCall[] = [];
  #now: number;
  #step: number;
  #n = 0;
  #usage: UsageRecord[] = [];
  readonly #base: Record<string, unknown>;

  constructor(
    readonly id: string,
    options: { start?: number; step?: number; cwd?: string } = {},
  ) {
    this.#now = options.start ?? Date.UTC(2026, 0, 5, 9);
    this.#step = options.step ?? 15_000;
    this.#base = { session_id: id, cwd: options.cwd ?? "/work/app", prompt_id: "p1" };
    this.#push({ hook_event_name: "SessionStart", source: "startup" });
    this.#push({ hook_event_name: "UserPromptSubmit", prompt: `Task of ${id}.` });
  }

  #push(input: Record<string, unknown>, at = this.#now): void {
    const reads = input.hook_event_name !== "PreToolUse";
    this.calls.push({
      at,
      input: { ...this.#base, ...input },
      ...(reads && this.#usage.length > 0 ? { usage: this.#usage } : {}),
    });
    if (reads) this.#usage = [];
  }

  /** Lets time pass. */
  wait(ms: number): this {
    this.#now += ms;
    return this;
  }

  /** One model call's tokens, read by the next hook that reads the transcript. */
  spend(input: number, output = Math.round(input / 10), model = "claude-sonnet-4-5"): this {
    this.#usage.push({
      id: `${this.id}#usage${this.calls.length}`,
      model,
      input,
      output,
      cacheRead: 0,
      cacheWrite: 0,
    });
    return this;
  }

  /**
   * One tool call: PreToolUse, then PostToolUse with `response`, or PostToolUseFailure with `error`.
   * `gap` is the time since the previous call (default: one step).
   */
  tool(name: string, input: unknown, result: { response?: unknown; error?: string }, gap = this.#step): this {
    this.#now += gap;
    const call = { tool_name: name, tool_input: input, tool_use_id: `toolu_${this.id}_${++this.#n}` };
    this.#push({ hook_event_name: "PreToolUse", ...call });
    const after = this.#now + 1;
    if (result.error !== undefined)
      this.#push({ hook_event_name: "PostToolUseFailure", ...call, error: result.error }, after);
    else this.#push({ hook_event_name: "PostToolUse", ...call, tool_response: result.response ?? "" }, after);
    return this;
  }

  /** A shell command: exit 0 with `output`, or a failure with Claude Code's `Exit code N` error. */
  bash(command: string, output = "", exitCode = 0, gap?: number): this {
    return this.tool(
      "Bash",
      { command },
      exitCode === 0
        ? { response: { stdout: output, stderr: "", interrupted: false, isImage: false } }
        : { error: `Exit code ${exitCode}\n${output}` },
      gap,
    );
  }

  read(
    path: string,
    content = `contents of ${path}`,
    extra: Record<string, unknown> = {},
    gap?: number,
  ): this {
    return this.tool(
      "Read",
      { file_path: path, ...extra },
      { response: { type: "text", file: { filePath: path, content } } },
      gap,
    );
  }

  edit(path: string, oldText: string, newText: string): this {
    return this.tool(
      "Edit",
      { file_path: path, old_string: oldText, new_string: newText },
      { response: { filePath: path } },
    );
  }

  write(path: string, content: string): this {
    return this.tool("Write", { file_path: path, content }, { response: { type: "create", filePath: path } });
  }

  /** The agent says it is done (Stop). */
  done(message = "Done."): this {
    this.#now += this.#step;
    this.#push({ hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: message });
    return this;
  }

  /** The session as a logged run. */
  run(): LoggedRun {
    return {
      id: this.id,
      agent: "claude",
      format: "claude-transcript",
      source: `scripted:${this.id}`,
      calls: this.calls,
    };
  }
}
