/** The proof every CLI command recording a person's action asks first: the people's token (docs/person-actions.md). */
import type { Command } from "commander";
import { ReinsError } from "../base/core/errors.js";
import { personToken, sameSecret } from "../base/config/hook-secret.js";

/** What a person's action says of itself: its name in messages, and the token it was given, if any. */
export interface PersonClaim {
  /** The command as a person types it: `budget extend`, `circuit reset`, `alerts --ack`. */
  action: string;
  /** `--token`, else `$REINS_PERSON_TOKEN`; empty counts as not given. */
  token: string | undefined;
}

/** Adds `--token` to a command that records a person's action. */
export function withPersonToken(command: Command): Command {
  return command.option(
    "--token <token>",
    "the people's token, for a person's script (default: $REINS_PERSON_TOKEN); checked against .reins/api-token",
  );
}

/** The claim of a command's `--token`, else the environment's `REINS_PERSON_TOKEN`. */
export function claimOf(
  action: string,
  token: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): PersonClaim {
  const given = token ?? env.REINS_PERSON_TOKEN;
  return { action, token: given === undefined || given === "" ? undefined : given };
}

/**
 * Throws not_a_person unless a person is shown to act in project `root`: this process can read (or, the
 * first time, make) the project's people's token, and a token given matches it. Asked before the store is
 * opened, whatever the store is: the token lives in the project's `.reins/`, which the agent's boundary
 * hides, so a command the agent runs fails however it is spelt. A given token is checked against the file,
 * never taken alone: an agent that inherited `REINS_PERSON_TOKEN` from its person's shell still cannot act.
 */
export function provePerson(root: string, claim: PersonClaim): void {
  const expected = personToken(root);
  if (expected === null)
    throw new ReinsError(
      "not_a_person",
      `${claim.action} is a person's action, and this shell cannot show it is a person's (the people's token in ${root}/.reins/ is out of its reach): a person must run it in their own terminal`,
    );
  if (claim.token !== undefined && !sameSecret(claim.token, expected))
    throw new ReinsError(
      "not_a_person",
      `${claim.action} is a person's action, and the token given (--token or REINS_PERSON_TOKEN) is not this project's people's token (.reins/api-token): nothing was recorded`,
    );
}
