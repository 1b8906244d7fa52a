/** The request pieces several API resources share: ids, who and why, paging, and the list query. */
import * as z from "zod";
import { scopeText } from "../../base/core/event-schema.js";

export const id = scopeText;
export const idParams = z.object({ id });
export const by = z.string().trim().min(1).max(256).optional();
export const reason = z.string().trim().min(1, "a reason is required").max(2_000);
export const page = {
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
};
const budgetStatus = z.enum(["active", "warning", "paused", "exhausted"]);
const breakerStatus = z.enum(["closed", "open", "half_open"]);
export const bool = z.enum(["true", "false"]).transform((v) => v === "true");
/** A JSON body that may be left out (Fastify gives null then). */
export const optionalBody = <T extends z.ZodType>(schema: T) => z.preprocess((v) => v ?? {}, schema);

/** The query of the scope lists (budgets, circuits, sessions): filters, sort and page. */
export const listQuery = z.object({
  ...page,
  status: budgetStatus.optional(),
  breaker: breakerStatus.optional(),
  q: z.string().max(1024).optional(),
  sort: z.enum(["lastAt", "scope", "tokens", "usd", "utilization", "events"]).default("lastAt"),
  order: z.enum(["asc", "desc"]).default("desc"),
});

/** A person's action on a breaker, its body optional. */
export const actionBody = optionalBody(z.object({ reason: reason.optional(), by }));
