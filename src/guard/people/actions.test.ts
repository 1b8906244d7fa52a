/** A person's acknowledgement of an alert: one recorded human action, spooled like the others. */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Pipeline } from "../../base/core/pipeline.js";
import { ReinsError } from "../../base/core/errors.js";
import type { ReinsEvent } from "../../base/core/reins-event.js";
import { resolvePolicy, type Policy } from "../../base/core/policy.js";
import { timeline } from "../../base/core/timeline.js";
import { MemoryStore } from "../../base/store/memory.js";
import { Spool } from "../../base/store/spool.js";
import { acknowledgeAlert } from "./actions.js";

const policy = resolvePolicy({ budget: { session: { tokens: 10_000 } } });
const scope = "session:spender";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A memory store whose appends fail as a store that went down does, while `down` is set. */
class Droppable extends MemoryStore {
  down = false;
  override append(scope: string, events: readonly ReinsEvent[], policy: Policy, guards?: Pipeline) {
    if (this.down) return Promise.reject(new ReinsError("store_unavailable", "the store went down"));
    return super.append(scope, events, policy, guards);
  }
}

/** A project folder and a store holding one session with two alerts, a budget warning and a pause. */
async function spent() {
  const root = mkdtempSync(join(tmpdir(), "reins-ack-"));
  dirs.push(root);
  const store = new Droppable();
  const t = timeline(scope).started().usage({ inputTokens: 8_500 }).usage({ inputTokens: 2_000 });
  await store.append(scope, t.events, policy);
  const [paused, warning] = await store.alerts({ scope });
  return { root, store, warning: warning!.id, paused: paused!.id };
}

const acks = async (store: MemoryStore) =>
  (await store.events(scope)).filter((r) => r.event.kind === "human.alert_acknowledged");

describe("acknowledging an alert", () => {
  it("records one human event, and the alert is acknowledged by the same append", async () => {
    const { root, store, warning } = await spent();
    const alert = await acknowledgeAlert(store, policy, root, warning, "ana", 9_000);
    expect(alert).toMatchObject({ id: warning, acknowledged: true, acknowledgedBy: "ana" });
    expect((await acks(store)).map((r) => r.event)).toMatchObject([
      { kind: "human.alert_acknowledged", alertId: warning, by: "ana", at: 9_000, scope },
    ]);
    expect((await store.alerts({ scope, acknowledged: true })).map((a) => a.id)).toEqual([warning]);
  });

  it("when the store drops before the append, is spooled, and applied exactly once when delivered", async () => {
    const { root, store, warning, paused } = await spent();
    store.down = true;
    await expect(acknowledgeAlert(store, policy, root, warning, "ana", 9_000)).rejects.toThrow(
      /spooled and will be applied/,
    );
    expect(await acks(store)).toEqual([]);
    expect((await store.alerts({ acknowledged: true })).length).toBe(0);

    const spool = new Spool(join(root, ".reins", "spool"));
    const [file] = spool.files();
    expect(file).toBeDefined();
    // Delivered twice (a drain killed after the append, before it removed the file): applied once.
    const again = mkdtempSync(join(tmpdir(), "reins-ack-again-"));
    dirs.push(again);
    copyFileSync(join(spool.dir, file!), join(again, file!));
    store.down = false;
    expect(await spool.drain(store, policy)).toEqual({ delivered: 1, rejected: 0, expired: 0 });
    expect(await new Spool(again).drain(store, policy)).toEqual({ delivered: 1, rejected: 0, expired: 0 });
    expect(readdirSync(spool.dir).filter((f) => f.endsWith(".json"))).toEqual([]);

    expect((await acks(store)).map((r) => r.event)).toMatchObject([{ alertId: warning, by: "ana" }]);
    const alerts = await store.alerts({ scope });
    expect(alerts.map((a) => [a.id, a.acknowledged, a.acknowledgedBy])).toEqual([
      [paused, false, null],
      [warning, true, "ana"],
    ]);
  });

  it("is null for an alert the store does not have, and records nothing", async () => {
    const { root, store } = await spent();
    for (const id of ["nope", `${scope}#99#0`, "session:nobody#1#0"])
      expect(await acknowledgeAlert(store, policy, root, id, "ana", 9_000)).toBeNull();
    expect(await acks(store)).toEqual([]);
  });
});
