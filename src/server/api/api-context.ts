/** What the API routes work with: the context the server hands in, and the typed app they register on. */
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import type { Spool } from "../../base/store/spool.js";
import type { StateScan } from "../scan.js";
import type { EventHub } from "../stream.js";

/** What the API routes work with. */
export interface ApiContext {
  root: string;
  store: Store;
  policy: Policy;
  spool: Spool;
  hub: EventHub;
  /** Every scope's state, read once for many readers (the list endpoints). */
  scan: StateScan;
  /** Extends and resets allowed per token per minute. @default 10 */
  actionsPerMinute?: number;
}

/** The Fastify instance under /api, its requests and answers typed by their zod schemas. */
export type ApiApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** The hook that counts a request against the shared limit on extends and resets. */
export type ActionLimit = ReturnType<ApiApp["rateLimit"]>;
