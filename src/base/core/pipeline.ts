/** A pipeline: the guards of an engine, sorted into the order they evaluate in. */
import type { Guard } from "./guard.js";

/** An ordered list of guards, ready to evaluate. */
export type Pipeline = readonly Guard[];

/** Sorts guards into evaluation order. */
export function pipeline(guards: readonly Guard[]): Pipeline {
  return [...guards].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
}
