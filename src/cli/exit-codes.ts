/** The exit codes of the reins CLI. */

/**
 * Exit codes: 0 fine, 1 the check failed (a divergence, or a person's action where no person is shown to
 * act), 2 a usage or input error.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
