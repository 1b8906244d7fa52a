/** Tests of the proof a person's action asks: the people's token, read or made in the project's `.reins/`. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReinsError } from "../base/core/errors.js";
import { apiToken, tokenPath } from "../base/config/hook-secret.js";
import { claimOf, provePerson } from "./person-proof.js";

const project = () => mkdtempSync(join(tmpdir(), "reins-person-proof-"));

/** The error `fn` throws, or null. */
function thrown(fn: () => void): unknown {
  try {
    fn();
    return null;
  } catch (error) {
    return error;
  }
}

describe("provePerson", () => {
  it("passes where the token can be read, and makes the project's first one", () => {
    const dir = project();
    expect(thrown(() => provePerson(dir, claimOf("confirm", undefined, {})))).toBeNull();
    const made = apiToken(dir);
    expect(made.created).toBe(false);
    expect(thrown(() => provePerson(dir, claimOf("confirm", made.value, {})))).toBeNull();
    expect(
      thrown(() => provePerson(dir, claimOf("confirm", undefined, { REINS_PERSON_TOKEN: made.value }))),
    ).toBeNull();
  });

  it("refuses with not_a_person where the token can be neither read nor made", () => {
    const dir = project();
    // A file where the folder would be: nothing can be read from it or made in it, as inside the boundary.
    writeFileSync(join(dir, ".reins"), "");
    const error = thrown(() => provePerson(dir, claimOf("budget extend", undefined, {})));
    expect(ReinsError.is(error) && error.code).toBe("not_a_person");
    expect((error as Error).message).toBe(
      `budget extend is a person's action, and this shell cannot show it is a person's (the people's token in ${dir}/.reins/ is out of its reach): a person must run it in their own terminal`,
    );
  });

  it("refuses a token that is not the project's, by --token before REINS_PERSON_TOKEN", () => {
    const dir = project();
    const token = apiToken(dir).value;
    for (const claim of [
      claimOf("circuit reset", "x".repeat(token.length), {}),
      claimOf("circuit reset", undefined, { REINS_PERSON_TOKEN: `${token}x` }),
      claimOf("circuit reset", "wrong", { REINS_PERSON_TOKEN: token }),
    ]) {
      const error = thrown(() => provePerson(dir, claim));
      expect(ReinsError.is(error) && error.code).toBe("not_a_person");
      expect((error as Error).message).toMatch(/the token given .* is not this project's people's token/);
    }
  });

  it("takes an empty REINS_PERSON_TOKEN as none given", () => {
    const dir = project();
    apiToken(dir);
    expect(claimOf("confirm", undefined, { REINS_PERSON_TOKEN: "" }).token).toBeUndefined();
    expect(
      thrown(() => provePerson(dir, claimOf("confirm", undefined, { REINS_PERSON_TOKEN: "" }))),
    ).toBeNull();
  });

  it("names a token file that holds no secret, as every secret's reader does", () => {
    const dir = project();
    mkdirSync(join(dir, ".reins"));
    writeFileSync(tokenPath(dir), "short\n");
    const error = thrown(() => provePerson(dir, claimOf("confirm", undefined, {})));
    expect(ReinsError.is(error) && error.code).toBe("usage");
    expect((error as Error).message).toMatch(/api-token does not hold a secret reins can trust/);
  });
});
