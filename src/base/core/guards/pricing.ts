/** The pricing guard: says once per session and model that an unlisted model's cost was estimated. */
import { clip } from "../capped.js";
import { advise, pass, quote, type Guard } from "../guard.js";

const name = "pricing";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Says once per session and model when USD was estimated: the model is not in the policy's price table, so
 * its usage was priced as its family's (or, of no known family, at the table's highest price), never as
 * free. The words name the model and the `prices` setting that makes the figure exact.
 */
export const pricing: Guard = {
  name,
  order: 105,
  category: "resource-limits",
  shortCircuit: false,
  grades: ["advise"],
  answers: ["usage.recorded"],
  evaluate(state, event) {
    if (event.kind !== "usage.recorded" || event.model === undefined || event.pricing === undefined)
      return passed;
    const estimated = event.pricing === "unknown" || event.pricing.startsWith("family:");
    const model = clip(event.model);
    if (!estimated || (state.priced?.includes(model) ?? false)) return passed;
    const as =
      event.pricing === "unknown"
        ? "at the highest price the table lists"
        : `as ${quote(event.pricing.slice("family:".length))}`;
    return advise(
      name,
      `USD spend of ${quote(event.model)} is estimated ${as}: the price table has no entry for it. Add it to \`prices\` in reins.config.json for exact figures.`,
      { effects: [{ kind: "pricing.noted", model }] },
    );
  },
};
