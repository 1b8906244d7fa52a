import { describe, expect, it } from "vitest";
import { RemoteStore } from "./remote.js";

/** The entries of REINS_SERVER_URL: the usable ones kept, the others skipped and named once. */

/** What a store over `url` fails with when none of its servers can be used or reached. */
async function failure(url: string): Promise<{ code?: string; message: string }> {
  const error = await new RemoteStore(url, "token", 1_000).scopes().catch((e: unknown) => e);
  return error as { code?: string; message: string };
}

describe("RemoteStore's server list", () => {
  it("keeps the usable entries and names each skipped one once in its warning", () => {
    const store = new RemoteStore(
      "ftp://typo, http://reins-a:7878/, http://[::1, ftp://typo,,https://reins-b",
      "token",
    );
    expect(store.location).toBe("http://reins-a:7878");
    expect(store.warning).toBe(
      'REINS_SERVER_URL: skipped "ftp://typo" (not http or https), "http://[::1" (not a URL), an empty entry',
    );
    expect(new RemoteStore("http://reins-a:7878, https://reins-b", "token").warning).toBe("");
  });

  it("hides a password in a skipped entry", () => {
    const store = new RemoteStore("ftp://ana:hunter2@files", "token");
    expect(store.warning).toContain('"ftp://ana:***@files"');
    expect(store.warning).not.toContain("hunter2");
  });

  it.each([
    ["ftp://typo", 'skipped "ftp://typo" (not http or https)'],
    ["http://[::1", 'skipped "http://[::1" (not a URL)'],
    [" , ", "skipped 2 empty entries"],
  ])("with no usable entry (%j) every call fails as an unavailable store, saying why", async (url, why) => {
    const error = await failure(url);
    expect(error.code).toBe("store_unavailable");
    expect(error.message).toBe(
      `REINS_SERVER_URL names no usable server (e.g. http://reins.internal:7878): ${why}`,
    );
  });

  it("adds the skipped entries, once, to the line saying the usable ones are unreachable", async () => {
    const error = await failure("http://127.0.0.1:9,ftp://typo");
    expect(error.code).toBe("store_unavailable");
    expect(error.message).toMatch(
      /^reins server unreachable: http:\/\/127\.0\.0\.1:9 \(bad port\); REINS_SERVER_URL: skipped "ftp:\/\/typo" \(not http or https\)$/,
    );
  });
});
