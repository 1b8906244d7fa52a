/** The limit on people's actions through the API: extends and resets, counted per token per minute. */
import { createHash } from "node:crypto";
import rateLimit from "@fastify/rate-limit";
import { bearerToken } from "../../base/config/hook-secret.js";
import type { ActionLimit, ApiApp } from "./api-context.js";

/**
 * Registers the rate limit on `app` and answers the one hook that shares its count: extends and
 * resets of budgets and breakers, `perMinute` per token.
 */
export async function registerActionLimit(app: ApiApp, perMinute: number): Promise<ActionLimit> {
  await app.register(rateLimit, {
    global: false,
    max: perMinute,
    timeWindow: 60_000,
    // Keyed on the token itself, however the header is spelled (the scheme's case, spaces around it).
    keyGenerator: (request) =>
      createHash("sha256")
        .update(bearerToken(request.headers.authorization) ?? `ip:${request.ip}`)
        .digest("hex"),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      error: "rate_limited",
      message: `at most ${context.max} budget and breaker changes per minute; try again in ${context.after}`,
    }),
  });
  // One shared count for extend and reset (of budgets and breakers), per token.
  return app.rateLimit();
}
