/** The policy: its defaults, its zod schema, and resolvePolicy, which fills in and checks a user's policy. */
import * as z from "zod";
import { DEFAULT_CHECK_PATTERNS } from "./check-patterns.js";
import { invalidPolicy } from "./invalid-policy.js";

/**
 * The default policy (docs/architecture.md, "Guards and their default policy"), written out once: the
 * schema below fills in these values, and `defaultPolicy` is this object, so loading the module does no zod
 * work.
 */
const DEFAULTS = {
  failClosed: false,
  store: "sqlite",
  budget: {
    mode: "hard" as "hard" | "soft",
    warnAt: 0.8,
    askAt: 0.9,
    pauseAt: 1,
    countCacheReads: false,
    session: { tokens: 500_000, usd: null, premiumRequests: null, wallTimeMs: null, toolCalls: null },
    task: { tokens: 100_000, usd: null, premiumRequests: null, wallTimeMs: null, toolCalls: null },
    taskTypes: {
      /** One prompt of an interactive agent: only the session's budget limits it. */
      prompt: null,
      planning: 50_000,
      implement: 100_000,
      review: 30_000,
      test: 50_000,
      deploy: 20_000,
      design: 50_000,
    },
  },
  spendRate: {
    windowMs: 60_000,
    baselineWindows: 5,
    burstFactor: 5,
    minTokens: 20_000,
    maxTokensPerWindow: null,
    maxUsdPerWindow: null,
  },
  circuit: {
    maxCallsPerTask: 50,
    duplicateThreshold: 5,
    rapidFireWindowMs: 10_000,
    /** The seeds' 20 per 10 s denies Claude Code's parallel tool calls: three turns of eight reads. */
    rapidFireThreshold: 40,
    failedVerificationThreshold: 3,
    deniedRetryThreshold: 2,
    cooldownMs: 60_000,
    autoHalfOpenMs: null,
  },
  churn: { warningAt: 2, interventionAt: 3, haltAt: 5 },
  circular: { threshold: 3 },
  loops: {
    alternatingWarnCycles: 2,
    alternatingBlockCycles: 3,
    nearIdenticalThreshold: 6,
    errorRepeatWarn: 3,
    errorRepeatBlock: 5,
    tools: {},
  },
  quality: { declines: 3 },
  thrashing: { iterations: 5 },
  discipline: { repeatedReads: 3, repeatedCommandFailures: 3, editsWithoutTests: 5 },
  iterations: { max: 30 },
  /** The seeds' 10 edits denied one successful real run in six (agents edit with many small `sed -i`s); see README. */
  verification: { maxEditsWithoutVerification: 25, fixOnlyWhileRed: true },
  completion: {
    required: {
      session: ["tests"],
      task: ["tests", "task"],
      component: ["tests", "lint", "component"],
      module: ["tests", "lint", "build", "module"],
    },
    maxRefusals: 5,
    promise: null as string | null,
    /** Filled in by the shell with the project's own commands (package.json, pyproject.toml, go.mod...). */
    commands: {} as Record<string, string>,
  },
  checks: DEFAULT_CHECK_PATTERNS.map((c) => ({ ...c })),
  prices: {
    "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    "claude-haiku-4": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    "claude-3-5-haiku": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
    "gpt-5": { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
    "gpt-5-mini": { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 },
    "gpt-4.1": { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 },
    "gemini-2.5-pro": { input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 0 },
    "gemini-2.5-flash": { input: 0.3, output: 2.5, cacheRead: 0.075, cacheWrite: 0 },
  },
  wip: { maxInFlightTasks: 3, maxUnverifiedLines: 1_000, maxRetriesPerFailureClass: 8 },
  /**
   * What `reins gc` keeps: a month covers the dashboard's charts (a day to a week), a billing cycle and a
   * paused run's wait for a person; 10,000 records is a long agent session (about 3,000 tool calls) whole.
   */
  retention: { days: 30, records: 10_000 },
  /** Deny an agent's changes to reins' own files and its acting as a person (README, "Security"). */
  protection: { enabled: true },
  /** The reviewer model of `verify_*_completion` (README, "Oracle"): off unless enabled. */
  oracle: {
    enabled: false,
    via: "claude" as OracleVia,
    model: null as string | null,
    url: null as string | null,
    apiKeyEnv: null as string | null,
    timeoutMs: 60_000,
    maxDiffBytes: 24 * 1024,
  },
  pools: {},
};

/** How the oracle reaches its model: an agent CLI, or an Anthropic- or OpenAI-compatible endpoint. */
export const ORACLE_VIAS = ["claude", "codex", "gemini", "anthropic", "openai"] as const;
/** One of ORACLE_VIAS. */
export type OracleVia = (typeof ORACLE_VIAS)[number];

/** Limits left out of a meter, a pool or a spend rate: unlimited. */
const NONE = null as number | null;

/** A map whose entries the user adds to or overrides one by one; the defaults not named stay. */
function withDefaults<T extends z.ZodType>(value: T, defaults: Record<string, z.output<T>>) {
  return z
    .record(z.string(), value)
    .default({})
    .transform((given) => ({ ...defaults, ...given }));
}

/** The number schemas every section shares (one instance each, as the sections were one builder). */
function numbers() {
  return {
    count: z.number().int().nonnegative(),
    positive: z.number().int().positive(),
    fraction: z.number().gt(0).lte(10),
    /** A limit; `null` means unlimited. */
    limit: z.number().nonnegative().nullable(),
  };
}

type Numbers = ReturnType<typeof numbers>;

/** `budget`: the session's and the task's meters, and when to warn, ask and pause. */
function budgetSchema({ fraction, limit }: Numbers) {
  const meterLimits = (tokens: number | null) =>
    z
      .object({
        tokens: limit.default(tokens),
        usd: limit.default(NONE),
        premiumRequests: limit.default(NONE),
        wallTimeMs: limit.default(NONE),
        toolCalls: limit.default(NONE),
      })
      .strict()
      .prefault({});

  return z
    .object({
      /** `hard` pauses at 100%; `soft` only warns. */
      mode: z.enum(["hard", "soft"]).default(DEFAULTS.budget.mode),
      warnAt: fraction.default(DEFAULTS.budget.warnAt),
      askAt: fraction.default(DEFAULTS.budget.askAt),
      pauseAt: fraction.default(DEFAULTS.budget.pauseAt),
      /** Count prompt-cache reads as tokens (they are cheap, and huge in long sessions). */
      countCacheReads: z.boolean().default(DEFAULTS.budget.countCacheReads),
      session: meterLimits(DEFAULTS.budget.session.tokens),
      task: meterLimits(DEFAULTS.budget.task.tokens),
      /** Token budget of a task by its type (`null`: unlimited); overrides `task.tokens`. */
      taskTypes: withDefaults(z.number().nonnegative().nullable(), DEFAULTS.budget.taskTypes),
    })
    .strict()
    .prefault({})
    .refine((b) => b.warnAt <= b.askAt && b.askAt <= b.pauseAt, {
      message: "must satisfy warnAt <= askAt <= pauseAt",
    });
}

/** `spendRate`: bursts of spend against the session's own baseline, and caps per window. */
function spendRateSchema({ count, positive, limit }: Numbers) {
  return z
    .object({
      /** Length of one rate window. */
      windowMs: positive.default(DEFAULTS.spendRate.windowMs),
      /** How many earlier windows make the session's own baseline. */
      baselineWindows: z.number().int().min(1).max(30).default(DEFAULTS.spendRate.baselineWindows),
      /** A window this many times above the baseline is a burst. */
      burstFactor: z.number().gt(1).default(DEFAULTS.spendRate.burstFactor),
      /** Bursts below this many tokens per window are ignored. */
      minTokens: count.default(DEFAULTS.spendRate.minTokens),
      maxTokensPerWindow: limit.default(NONE),
      maxUsdPerWindow: limit.default(NONE),
    })
    .strict()
    .prefault({});
}

/** `circuit`: when the breaker opens, and how it closes again. */
function circuitSchema({ count, positive, limit }: Numbers) {
  return z
    .object({
      maxCallsPerTask: positive.default(DEFAULTS.circuit.maxCallsPerTask),
      duplicateThreshold: z.number().int().min(2).max(1000).default(DEFAULTS.circuit.duplicateThreshold),
      rapidFireWindowMs: positive.default(DEFAULTS.circuit.rapidFireWindowMs),
      rapidFireThreshold: z.number().int().min(2).max(1000).default(DEFAULTS.circuit.rapidFireThreshold),
      failedVerificationThreshold: positive.default(DEFAULTS.circuit.failedVerificationThreshold),
      /** A call reins denied this many times in a row, made again with no change let through between. */
      deniedRetryThreshold: positive.default(DEFAULTS.circuit.deniedRetryThreshold),
      /** Time without anomaly, after a good probe, before half-open closes. */
      cooldownMs: count.default(DEFAULTS.circuit.cooldownMs),
      /** Open turns half-open by itself after this long; `null`: only a human can. */
      autoHalfOpenMs: limit.default(NONE),
    })
    .strict()
    .prefault({});
}

/** `churn`: the levels of rework that warn, intervene and halt. */
function churnSchema({ positive }: Numbers) {
  return z
    .object({
      warningAt: positive.default(DEFAULTS.churn.warningAt),
      interventionAt: positive.default(DEFAULTS.churn.interventionAt),
      haltAt: positive.default(DEFAULTS.churn.haltAt),
    })
    .strict()
    .prefault({})
    .refine((c) => c.warningAt <= c.interventionAt && c.interventionAt <= c.haltAt, {
      message: "must satisfy warningAt <= interventionAt <= haltAt",
    });
}

/** `loops`: alternating, near-identical and repeated-error loops, with per-tool thresholds. */
function loopsSchema({ positive }: Numbers) {
  const toolOverrides = z
    .object({
      /** Never count this tool's calls as loops (a status poll, a scroll). */
      exempt: z.boolean().optional(),
      duplicateThreshold: positive.optional(),
      nearIdenticalThreshold: positive.optional(),
    })
    .strict();

  return z
    .object({
      alternatingWarnCycles: z.number().int().min(2).default(DEFAULTS.loops.alternatingWarnCycles),
      alternatingBlockCycles: z.number().int().min(2).max(4).default(DEFAULTS.loops.alternatingBlockCycles),
      nearIdenticalThreshold: z.number().int().min(2).max(8).default(DEFAULTS.loops.nearIdenticalThreshold),
      errorRepeatWarn: positive.default(DEFAULTS.loops.errorRepeatWarn),
      errorRepeatBlock: positive.default(DEFAULTS.loops.errorRepeatBlock),
      /** Per-tool thresholds and exemptions, by tool name. */
      tools: z.record(z.string(), toolOverrides).default({}),
    })
    .strict()
    .prefault({});
}

/** `discipline`: repeated reads and failures, and edits without tests. */
function disciplineSchema({ positive }: Numbers) {
  return z
    .object({
      repeatedReads: z.number().int().min(2).default(DEFAULTS.discipline.repeatedReads),
      repeatedCommandFailures: z.number().int().min(2).default(DEFAULTS.discipline.repeatedCommandFailures),
      editsWithoutTests: positive.default(DEFAULTS.discipline.editsWithoutTests),
    })
    .strict()
    .prefault({});
}

/** `verification`: edits allowed between checks, and no new task while one is red. */
function verificationSchema({ positive }: Numbers) {
  return z
    .object({
      /** Edits allowed since the last verification; the next one is blocked. */
      maxEditsWithoutVerification: positive.default(DEFAULTS.verification.maxEditsWithoutVerification),
      /** While a required check is red, no new task may start. */
      fixOnlyWhileRed: z.boolean().default(DEFAULTS.verification.fixOnlyWhileRed),
    })
    .strict()
    .prefault({});
}

/** `completion`: what must have passed before "done", per level, and how often "done" may be refused. */
function completionSchema({ positive }: Numbers) {
  const levelList = z.array(z.string().min(1));
  return z
    .object({
      /** Verifications that must have passed after the last edit, per level. */
      required: z
        .object({
          session: levelList.default(DEFAULTS.completion.required.session),
          task: levelList.default(DEFAULTS.completion.required.task),
          component: levelList.default(DEFAULTS.completion.required.component),
          module: levelList.default(DEFAULTS.completion.required.module),
        })
        .strict()
        .prefault({}),
      /** After this many refused "done" claims in a row, the agent may stop anyway (with the reason). */
      maxRefusals: positive.default(DEFAULTS.completion.maxRefusals),
      /** Text the agent's last message must contain for "done" (the "keep going until done" loop); null: none. */
      promise: z.string().min(1).max(1_000).nullable().default(DEFAULTS.completion.promise),
      /** The command to suggest for a missing check, when none was seen yet. */
      commands: withDefaults(z.string().min(1), DEFAULTS.completion.commands),
    })
    .strict()
    .prefault({});
}

/**
 * `checks`: shell commands that are verifications: a tool call whose command (its last pipeline, each stage
 * with wrappers such as `timeout 60` or `poetry run` stripped) matches `pattern`, a regular expression,
 * becomes `verification.ran` with `name`, passed or failed by its exit code or its test summary.
 */
function checksSchema() {
  /** A regular expression's source, checked to compile. */
  const regex = z
    .string()
    .min(1)
    .max(500)
    .refine((source) => {
      try {
        new RegExp(source);
        return true;
      } catch {
        return false;
      }
    }, "must be a valid regular expression");
  return z
    .array(z.object({ pattern: regex, name: z.string().min(1).max(64) }).strict())
    .default(DEFAULTS.checks);
}

/**
 * `prices`: USD per million tokens by model name prefix (longest prefix wins); usage of a model not listed
 * costs nothing. Defaults are list prices of current models; override them for your contract.
 */
function pricesSchema() {
  /** USD per million tokens of each kind. */
  const price = z
    .object({
      input: z.number().nonnegative(),
      output: z.number().nonnegative(),
      cacheRead: z.number().nonnegative().default(0),
      cacheWrite: z.number().nonnegative().default(0),
    })
    .strict();
  return withDefaults(price, DEFAULTS.prices);
}

/**
 * `oracle`: the optional reviewer of `verify_*_completion`: after the checks pass it judges the diff against
 * the acceptance criteria and may veto; it never passes what the checks failed.
 */
function oracleSchema() {
  return z
    .object({
      enabled: z.boolean().default(DEFAULTS.oracle.enabled),
      via: z.enum(ORACLE_VIAS).default(DEFAULTS.oracle.via),
      /** The model; null: `haiku` for claude, the CLI's own for codex and gemini; required for an endpoint. */
      model: z.string().min(1).max(200).nullable().default(DEFAULTS.oracle.model),
      /** The endpoint's base URL (anthropic, openai); null: the vendor's public API. */
      url: z
        .url({ protocol: /^https?$/ })
        .max(2048)
        .nullable()
        .default(DEFAULTS.oracle.url),
      /** The environment variable holding the endpoint's key; null: ANTHROPIC_API_KEY or OPENAI_API_KEY. */
      apiKeyEnv: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "an environment variable name")
        .nullable()
        .default(DEFAULTS.oracle.apiKeyEnv),
      /** A review that takes longer fails (and does not block). */
      timeoutMs: z.number().int().min(1_000).max(3_600_000).default(DEFAULTS.oracle.timeoutMs),
      /** Bytes of the diff the reviewer is shown. */
      maxDiffBytes: z.number().int().min(1_024).max(1_048_576).default(DEFAULTS.oracle.maxDiffBytes),
    })
    .strict()
    .prefault({})
    .refine((o) => !o.enabled || o.model !== null || (o.via !== "anthropic" && o.via !== "openai"), {
      message: "an endpoint oracle (via anthropic or openai) needs a model",
    });
}

/** `wip`: tasks in flight, unverified lines, and retries per failure class. */
function wipSchema({ positive }: Numbers) {
  return z
    .object({
      maxInFlightTasks: positive.default(DEFAULTS.wip.maxInFlightTasks),
      maxUnverifiedLines: positive.default(DEFAULTS.wip.maxUnverifiedLines),
      maxRetriesPerFailureClass: positive.default(DEFAULTS.wip.maxRetriesPerFailureClass),
    })
    .strict()
    .prefault({});
}

/** `retention`: what `reins gc` keeps of the store and of `.reins/runs/` (README, "Store size and reins gc"). */
function retentionSchema({ positive }: Numbers) {
  return z
    .object({
      /** Scopes idle this many days, and log records and finished runs older, may go. */
      days: positive.max(36_500).default(DEFAULTS.retention.days),
      /** A scope keeps at most its last this many log records (and always those after its snapshot). */
      records: positive.max(1_000_000_000).default(DEFAULTS.retention.records),
    })
    .strict()
    .prefault({});
}

/**
 * `pools`: shared budgets (`pool:<name>`) that every session of this project also charges, across processes
 * and machines. A period starts a fresh pool at each UTC day, ISO week (Monday) or month.
 */
function poolsSchema({ limit }: Numbers) {
  return z
    .record(
      z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a pool name is 1 to 64 letters, digits, '_', '.' or '-'"),
      z
        .object({
          tokens: limit.default(NONE),
          usd: limit.default(NONE),
          premiumRequests: limit.default(NONE),
          toolCalls: limit.default(NONE),
          period: z.enum(["none", "daily", "weekly", "monthly"]).default("none"),
        })
        .strict(),
    )
    .default({});
}

/**
 * Builds the schema, on first use rather than when the module loads: building it costs milliseconds that a
 * process using only an already validated policy (the hook command, one per tool call) need not pay.
 * Each section comes from its own builder, in the order the file lists them.
 */
function buildSchema() {
  const n = numbers();
  const { positive } = n;
  return z
    .object({
      /** The JSON Schema of the file, for editors; not part of the policy. */
      $schema: z.string().optional().meta({ description: "The JSON Schema of this file, for editors." }),
      /** When the store is down: `false` (default) allows with a warning; `true` blocks. */
      failClosed: z.boolean().default(DEFAULTS.failClosed),
      /** Where state is kept: `sqlite` (the project's `.reins/reins.db`), `sqlite:<path>`, `redis://...`, `rediss://...`, `redis+cluster://host:port,...`, `memory`. */
      store: z.string().min(1).max(2048).default(DEFAULTS.store),
      budget: budgetSchema(n),
      spendRate: spendRateSchema(n),
      circuit: circuitSchema(n),
      churn: churnSchema(n),
      circular: z
        .object({ threshold: z.number().int().min(2).default(DEFAULTS.circular.threshold) })
        .strict()
        .prefault({}),
      loops: loopsSchema(n),
      quality: z
        .object({ declines: positive.default(DEFAULTS.quality.declines) })
        .strict()
        .prefault({}),
      thrashing: z
        .object({ iterations: z.number().int().min(2).default(DEFAULTS.thrashing.iterations) })
        .strict()
        .prefault({}),
      discipline: disciplineSchema(n),
      iterations: z
        .object({ max: positive.default(DEFAULTS.iterations.max) })
        .strict()
        .prefault({}),
      verification: verificationSchema(n),
      completion: completionSchema(n),
      checks: checksSchema(),
      prices: pricesSchema(),
      protection: z
        .object({ enabled: z.boolean().default(DEFAULTS.protection.enabled) })
        .strict()
        .prefault({}),
      oracle: oracleSchema(),
      wip: wipSchema(n),
      retention: retentionSchema(n),
      pools: poolsSchema(n),
    })
    .strict()
    .meta({ title: "reins policy", description: 'reins.config.json (README, "Configuration").' })
    .transform(({ $schema: _schema, ...policy }) => policy);
}

/** The zod schema of a policy: every field optional in input, every default filled in on output. */
export const policySchema = z.lazy(buildSchema);

/** Every threshold reins uses, with all defaults filled in. */
export type Policy = z.output<typeof policySchema>;

/** A policy as a user writes it: every field optional. */
export type PolicyInput = z.input<typeof policySchema>;

/** The default policy: what the schema fills in for `{}` (policy.test.ts checks that the two agree). */
export const defaultPolicy: Policy = DEFAULTS;

/**
 * Validates a user's policy and fills in every default. A bad value throws a ReinsError whose message names
 * each bad field, the value given and what is allowed, e.g. `budget.warnAt: got 2 — Too big: expected ...`.
 */
export function resolvePolicy(input: unknown, source = "policy"): Policy {
  // jitless: a policy is parsed once or twice per process, and compiling zod's fast path for it costs
  // more than the parse.
  const parsed = policySchema.safeParse(input ?? {}, { reportInput: true, jitless: true });
  if (parsed.success) return parsed.data;
  throw invalidPolicy(source, parsed.error);
}
