/** One frozen empty list, for the many places an absent list reads as empty: made once, not per event. */
export const EMPTY: readonly never[] = Object.freeze([]);
