import { ReinsError } from "../core/errors.js";

/**
 * Which failures inside a store's transaction are the store's and which are not. Only a store that cannot
 * be reached, opened or written is `store_unavailable`, which fails open and spools the events for later;
 * a fault of the code applying the events (a TypeError on what an event holds) is not: spooling it would
 * fail again at every later drain, and switch guarding off for the whole project.
 */

/** True for an error of the code, not of the store: the kinds of error JavaScript itself throws. */
export function isEngineFault(error: unknown): error is Error {
  return error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError;
}

/** The one-line error for events the engine could not apply: they are refused, not spooled. */
export function engineFault(error: Error): ReinsError {
  return new ReinsError(
    "invalid_event",
    `could not apply the events: ${error.message.split("\n")[0] ?? ""}`,
    {
      cause: error,
    },
  );
}
