/** A numbered tool request of session:s, as the spool and governor tests record them. */
import type { ReinsEvent } from "../../src/base/core/reins-event.js";

export const toolRequest = (n: number, extra: Partial<ReinsEvent> = {}): ReinsEvent =>
  ({
    kind: "tool.requested",
    at: 1_790_000_000_000 + n,
    scope: "session:s",
    id: `e${n}`,
    tool: "Bash",
    inputHash: `h${n}`,
    ...extra,
  }) as ReinsEvent;
