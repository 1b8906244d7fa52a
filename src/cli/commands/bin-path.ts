/** Where reins' own bin script is, for the hooks and servers the commands set up. */
import { REINS_BIN } from "../../base/config/package-info.js";

/** reins' own bin script, which agents' hooks run. */
export function binPath(): string {
  return REINS_BIN;
}
