/** The daemon's settings from the user's environment: the cap on the session states it keeps in memory. */
import { describe, expect, it } from "vitest";
import { DAEMON_STATES, daemonSettings } from "./settings.js";

describe("daemonSettings", () => {
  it("keeps DAEMON_STATES session states unless REINS_DAEMON_STATES says otherwise", () => {
    expect(daemonSettings({}).states).toBe(DAEMON_STATES);
    expect(daemonSettings({ REINS_DAEMON_STATES: " 50 " }).states).toBe(50);
  });

  it("refuses a cap that is not a whole number of at least 1, naming the variable", () => {
    for (const bad of ["0", "-3", "1.5", "lots", "1e9999"])
      expect(() => daemonSettings({ REINS_DAEMON_STATES: bad })).toThrow(/^REINS_DAEMON_STATES=/);
  });
});
