/** Tests of the spool watch: a stat, not a listing, tells an empty spool on every call. */
import { mkdirSync, mkdtempSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createGovernor } from "../../guard/governor.js";
import { RACY_MS, spoolMayHold } from "./spool-watch.js";
import { MemoryStore } from "./memory.js";
import { Spool } from "./spool.js";
import { toolRequest } from "#test/tool-request.js";

/** A spool whose folder exists and last changed well before RACY_MS ago. */
function settledSpool(): Spool {
  const spool = new Spool(join(mkdtempSync(join(tmpdir(), "reins-watch-")), "spool"));
  mkdirSync(spool.dir);
  const past = new Date(Date.now() - 10 * RACY_MS);
  utimesSync(spool.dir, past, past);
  return spool;
}

describe("the spool watch", () => {
  it("says a spool without a folder holds nothing, without listing it", () => {
    const spool = new Spool(join(mkdtempSync(join(tmpdir(), "reins-watch-")), "spool"));
    const files = vi.spyOn(spool, "files");
    expect(spoolMayHold(spool)).toBe(false);
    expect(files).not.toHaveBeenCalled();
  });

  it("lists a settled empty folder once, then only when a batch changes it", () => {
    const spool = settledSpool();
    const files = vi.spyOn(spool, "files");
    expect(spoolMayHold(spool)).toBe(false);
    expect(spoolMayHold(spool)).toBe(false);
    expect(files).toHaveBeenCalledTimes(1);
    // Another process's spool writes into the same folder.
    new Spool(spool.dir).add("session:s", [toolRequest(1)]);
    expect(spoolMayHold(spool)).toBe(true);
    expect(files).toHaveBeenCalledTimes(2);
  });

  it("lists a folder that changed less than RACY_MS ago on every call", () => {
    const spool = settledSpool();
    const files = vi.spyOn(spool, "files");
    const changed = Date.now();
    utimesSync(spool.dir, new Date(changed), new Date(changed));
    expect(spoolMayHold(spool, changed + RACY_MS - 1)).toBe(false);
    expect(spoolMayHold(spool, changed + RACY_MS - 1)).toBe(false);
    expect(files).toHaveBeenCalledTimes(2);
  });

  it("lets the governor deliver what another process spooled after the spool was found empty, in order", async () => {
    const spool = settledSpool();
    const store = new MemoryStore();
    const governor = createGovernor({ store, spool, onWarning: () => undefined });
    await governor.record("session:s", [toolRequest(1)]);
    new Spool(spool.dir).add("session:s", [toolRequest(2)]);
    await governor.record("session:s", [toolRequest(3)]);
    const ids = (await store.events("session:s")).map((r) => r.event.id);
    expect(ids).toEqual(["e1", "e2", "e3"]);
    expect(spool.files()).toEqual([]);
  });
});
