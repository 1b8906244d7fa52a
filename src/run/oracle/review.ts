/**
 * The oracle's one I/O: asks the reviewer model for a verdict, through an agent CLI (`claude -p`, `codex
 * exec`, `gemini`, the prompt on stdin, in an empty folder so no project hooks or files are involved) or an
 * Anthropic- or OpenAI-compatible endpoint (non-streaming fetch). A review that fails in any way is a
 * `failed` outcome, never an exception and never a veto.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Policy } from "../../base/core/policy.js";
import { runnerFor } from "../agents/index.js";
import { ORACLE_SYSTEM, reviewPrompt, type ReviewInput } from "./prompt.js";
import { parseVerdict, type OracleVerdict } from "./verdict.js";

/** The oracle's settings, as the policy holds them. */
export type OracleConfig = Policy["oracle"];

/** How a review ended. */
export type ReviewOutcome =
  | { kind: "approved" | "vetoed"; reviewer: string; verdict: OracleVerdict }
  | { kind: "failed"; reviewer: string; reason: string };

/** Where a review runs. */
export interface ReviewOptions {
  /** The environment the CLI starts from and the endpoint's key is read from. @default process.env */
  env?: Record<string, string | undefined>;
  /** Aborting ends the review (a `failed` outcome). */
  signal?: AbortSignal;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** The agent CLI's program. @default `REINS_<AGENT>_BIN`, else its name on PATH (runner.ts) */
  bin?: string;
}

/** Characters of an endpoint's answer read: a verdict is small. */
const MAX_ANSWER = 256 * 1024;

const DEFAULT_MODEL: Record<OracleConfig["via"], string | null> = {
  claude: "haiku",
  codex: null,
  gemini: null,
  anthropic: null,
  openai: null,
};
const DEFAULT_URL = { anthropic: "https://api.anthropic.com", openai: "https://api.openai.com" } as const;
const DEFAULT_KEY = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY" } as const;

/** `claude:haiku`, `openai:gpt-5-mini`: which reviewer answered, for findings and summaries. */
export function reviewerName(config: OracleConfig): string {
  const model = config.model ?? DEFAULT_MODEL[config.via];
  return model === null ? config.via : `${config.via}:${model}`;
}

/** One line of at most 300 characters, for a failed review's reason. */
function brief(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

/** Judges `input` with the configured reviewer. Resolves to a verdict or a failure; never rejects. */
export async function review(
  config: OracleConfig,
  input: ReviewInput,
  options: ReviewOptions = {},
): Promise<ReviewOutcome> {
  const reviewer = reviewerName(config);
  const prompt = reviewPrompt(input, config.maxDiffBytes);
  let answer: { text: string } | { error: string };
  try {
    answer =
      config.via === "anthropic" || config.via === "openai"
        ? await askEndpoint(config, config.via, prompt, options)
        : await askCli(config, config.via, prompt, options);
  } catch (error) {
    answer = { error: error instanceof Error ? error.message : String(error) };
  }
  if ("error" in answer) return { kind: "failed", reviewer, reason: brief(answer.error) };
  const parsed = parseVerdict(answer.text);
  if (parsed.kind === "unreadable") return { kind: "failed", reviewer, reason: brief(parsed.reason) };
  return { kind: parsed.verdict.veto ? "vetoed" : "approved", reviewer, verdict: parsed.verdict };
}

async function askCli(
  config: OracleConfig,
  via: "claude" | "codex" | "gemini",
  prompt: string,
  options: ReviewOptions,
): Promise<{ text: string } | { error: string }> {
  const model = config.model ?? DEFAULT_MODEL[via];
  const runner = runnerFor(via, {
    ...(model !== null ? { model } : {}),
    ...(options.bin !== undefined ? { bin: options.bin } : {}),
    ...(options.env !== undefined ? { baseEnv: options.env } : {}),
    // One answer, no edits: Claude Code may only read (which needs no permission); Codex's sandbox is read-only.
    maxTurns: 1,
    allowedTools: ["Read"],
    sandbox: "read-only",
  });
  const cwd = await mkdtemp(join(tmpdir(), "reins-oracle-"));
  try {
    const result = await runner.run({
      run: "oracle",
      task: "oracle",
      attempt: 1,
      mode: "implement",
      prompt: `${ORACLE_SYSTEM}\n\n${prompt}`,
      cwd,
      env: {},
      timeoutMs: config.timeoutMs,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    if (result.outcome !== "ok")
      return {
        error: `${via} ended ${result.outcome} (exit ${result.exitCode ?? "killed"}): ${result.summary}`,
      };
    return { text: result.summary };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

async function askEndpoint(
  config: OracleConfig,
  via: "anthropic" | "openai",
  prompt: string,
  options: ReviewOptions,
): Promise<{ text: string } | { error: string }> {
  const keyName = config.apiKeyEnv ?? DEFAULT_KEY[via];
  const key = (options.env ?? process.env)[keyName];
  if (key === undefined || key === "")
    return { error: `${keyName} is not set: the ${via} endpoint needs a key` };
  if (config.model === null) return { error: `no model: set oracle.model for an ${via} endpoint` };
  // `{url}/v1/...`, whether the URL was given with its `/v1` or without.
  const base = (config.url ?? DEFAULT_URL[via]).replace(/\/+$/, "").replace(/\/v1$/, "");
  const request =
    via === "anthropic"
      ? {
          url: `${base}/v1/messages`,
          headers: { "x-api-key": key, "anthropic-version": "2023-06-01" },
          body: {
            model: config.model,
            max_tokens: 1_024,
            system: ORACLE_SYSTEM,
            messages: [{ role: "user", content: prompt }],
          },
        }
      : {
          url: `${base}/v1/chat/completions`,
          headers: { authorization: `Bearer ${key}` },
          body: {
            model: config.model,
            messages: [
              { role: "system", content: ORACLE_SYSTEM },
              { role: "user", content: prompt },
            ],
          },
        };
  const timeout = AbortSignal.timeout(config.timeoutMs);
  const signal = options.signal !== undefined ? AbortSignal.any([timeout, options.signal]) : timeout;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(request.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...request.headers },
      body: JSON.stringify(request.body),
      signal,
    });
  } catch (error) {
    const reason = timeout.aborted ? `no answer within ${config.timeoutMs} ms` : (error as Error).message;
    return { error: `${via} endpoint ${request.url}: ${reason}` };
  }
  let text: string;
  try {
    text = (await response.text()).slice(0, MAX_ANSWER);
  } catch (error) {
    return { error: `${via} endpoint ${request.url}: reading the answer: ${(error as Error).message}` };
  }
  if (!response.ok) return { error: `${via} endpoint answered HTTP ${response.status}: ${text}` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: `${via} endpoint answered no JSON: ${text}` };
  }
  const answer = via === "anthropic" ? anthropicText(json) : openaiText(json);
  return answer === null ? { error: `${via} endpoint answered no text: ${text}` } : { text: answer };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The text blocks of a Messages API answer, joined; null when there are none. */
function anthropicText(json: unknown): string | null {
  if (!isRecord(json) || !Array.isArray(json.content)) return null;
  const texts = json.content.flatMap((b: unknown) =>
    isRecord(b) && b.type === "text" && typeof b.text === "string" ? [b.text] : [],
  );
  return texts.length > 0 ? texts.join("\n") : null;
}

/** The first choice's message content of a chat completion; null when there is none. */
function openaiText(json: unknown): string | null {
  if (!isRecord(json) || !Array.isArray(json.choices)) return null;
  const first: unknown = json.choices[0];
  if (!isRecord(first) || !isRecord(first.message)) return null;
  return typeof first.message.content === "string" ? first.message.content : null;
}
