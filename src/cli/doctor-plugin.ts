/** `reins doctor` on reins' plugin for opencode and Kilo Code: there, whole, and naming programs that are there. */
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { REINS_BIN } from "../base/config/package-info.js";
import { daemonName } from "../guard/daemon/paths.js";
import { pluginPath, pluginSource, readPlugin } from "../install/opencode-plugin.js";

/** A doctor check's line (doctor.ts, DoctorCheck), here without importing doctor.ts, which imports this file. */
interface DoctorCheck {
  subject: string;
  check: string;
  status: "ok" | "warn" | "fail" | "off";
  message: string;
  fix?: string;
}

/** An agent's install as doctor.ts reads one (AgentInstall): the plugin stands for a client install. */
interface AgentInstall {
  agent: string;
  file: string;
  user: boolean;
  hooks: Map<string, never[]>;
  mode: "client";
  port: number;
  daemon: string | null;
}

/**
 * The plugin check of `agent` (nothing when the project has no plugin of it) and the install it stands for,
 * so the daemon and containment checks cover it as they cover the hooks of the others.
 */
export function pluginChecks(
  agent: string,
  o: { root: string },
): { checks: DoctorCheck[]; installs: AgentInstall[] } {
  const file = pluginPath(agent, o.root);
  if (!existsSync(file)) return { checks: [], installs: [] };
  const base = { subject: agent, check: "plugin", fix: `reins init ${agent}` };
  const where = relative(o.root, file);
  const written = readPlugin(file);
  if (written === null)
    return { checks: [{ ...base, status: "fail", message: `${where} is not reins' plugin` }], installs: [] };
  const install: AgentInstall = {
    agent,
    file,
    user: false,
    hooks: new Map(),
    mode: "client",
    port: 0,
    daemon: written.daemon,
  };
  const gone = [written.node, written.bin].filter((p) => !existsSync(p));
  const check: DoctorCheck =
    gone.length > 0
      ? { ...base, status: "fail", message: `${where} runs ${gone.join(", ")}, which is not there` }
      : written.daemon !== daemonName(REINS_BIN) || written.bin !== REINS_BIN
        ? { ...base, status: "warn", message: `${where} was written by another reins (${written.bin})` }
        : { ...base, status: "ok", message: `${where}` };
  // A plugin changed by hand (or by the agent) is not the guard reins wrote.
  const whole = readPluginText(file) === pluginSource(written);
  return {
    checks: [
      whole ? check : { ...base, status: "fail", message: `${where} was changed since reins wrote it` },
    ],
    installs: [install],
  };
}

function readPluginText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}
