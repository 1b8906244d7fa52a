/**
 * Empty lists made once, not per event. EMPTY is frozen: it is handed out (a decision with nothing to
 * say). NO_ITEMS stands in for an absent list the core only reads (an event without paths); it is not
 * frozen, because a loop that meets frozen and ordinary lists alike takes V8's slow path, which
 * allocates on every step.
 */
export const EMPTY: readonly never[] = Object.freeze([]);
export const NO_ITEMS: readonly never[] = [];
