/** The store contract, run on the memory and SQLite stores. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../../src/base/store/memory.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";
import { storeContract } from "#test/store-contract.js";

storeContract("memory", () => Promise.resolve(new MemoryStore()));
storeContract(
  "sqlite",
  () => Promise.resolve(new SqliteStore(join(mkdtempSync(join(tmpdir(), "reins-sqlite-")), "reins.db"))),
  (store) => Promise.resolve(new SqliteStore(store.location)),
);
