/** How the API answers an error: a status and `{ error, message }`, one line, never a stack. */
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { ReinsError, type ReinsErrorCode } from "../../base/core/errors.js";
import type { ApiApp } from "./api-context.js";

/** The first issue of a failed validation, as "where.field: message". */
function validationMessage(error: {
  validation: { instancePath: string; message?: string }[];
  validationContext?: string;
}): string {
  const issue = error.validation[0];
  const path = issue?.instancePath.split("/").filter(Boolean).join(".") ?? "";
  const where = [error.validationContext ?? "request", path].filter(Boolean).join(".");
  return `${where}: ${issue?.message ?? "invalid"}`;
}

/** One line, never a stack: what every error answer carries. */
function oneLine(message: string): string {
  return (message.split("\n")[0] ?? "").slice(0, 500);
}

/**
 * The HTTP status of each error code; typed by the codes, so a new code does not compile until it
 * is given one here. An invalid_transition asks a task to move where its state does not go: the
 * request conflicts with the resource's state, as a conflict does (409). A git_failed is the server's
 * own tool failing, not the caller's request and not an upstream server's answer: 500. A not_a_person is
 * a person's action asked without a person's proof: 403, as the API answers the agents' token.
 */
export const STATUS_OF = {
  not_found: 404,
  conflict: 409,
  store_unavailable: 503,
  invalid_event: 400,
  invalid_policy: 400,
  invalid_trace: 400,
  invalid_log: 400,
  scope_mismatch: 400,
  usage: 400,
  invalid_plan: 400,
  git_failed: 500,
  invalid_transition: 409,
  not_a_person: 403,
} satisfies Record<ReinsErrorCode, number>;

/** Answers validation failures 400, ReinsErrors by their code, other client errors as they are, the rest 500. */
export function setErrorAnswers(app: ApiApp): void {
  app.setErrorHandler((error: unknown, _request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error))
      return reply.code(400).send({ error: "bad_request", message: validationMessage(error) });
    if (ReinsError.is(error))
      // A ReinsError from another copy of the package may carry a code this copy does not know.
      return reply
        .code((STATUS_OF as Partial<Record<string, number>>)[error.code] ?? 500)
        .send({ error: error.code, message: oneLine(error.message) });
    const status = (error as { statusCode?: number }).statusCode;
    const text = (error as { message?: unknown }).message;
    const message = oneLine(typeof text === "string" ? text : String(error));
    if (status !== undefined && status >= 400 && status < 500)
      return reply.code(status).send({ error: status === 429 ? "rate_limited" : "bad_request", message });
    return reply.code(500).send({ error: "internal", message });
  });
}
