/** The types of the engine's copy-on-write (cow.ts): shared parts of a state are read-only, and only a draft opens them. */

/** Never a value: the key of the mark below, so nothing outside cow.ts can make the mark. */
declare const MINE: unique symbol;

/**
 * The mark of a part of a state that may be written at its top: a copy a draft made, or a state its caller
 * owns. Only cow.ts hands out marked parts; the mark is a type, nothing at run time.
 */
export interface Mine {
  readonly [MINE]: true;
}

/**
 * A part of a state as the reducer sees it before it opens it: read-only all the way down, since it may be
 * shared with the state being drafted from (the input of `decide`). Writing it is a compile error.
 */
export type Shared<T> = T extends object ? { readonly [K in keyof T]: Shared<T[K]> } : T;

/** A part that may be written at its top (its own fields, or a list's items), its parts below still shared. */
export type Own<T> = T extends object ? { -readonly [K in keyof T]: Shared<T[K]> } & Mine : T;

/** A shared part opened by a draft: writable at its top (`Own` of what it was shared from). */
export type Opened<S> = S extends object ? { -readonly [K in keyof S]: S[K] } & Mine : S;
