/** The notices of a config that did not load whole: each problem, at a turn's start and with every deny. */
import { loadPolicyChecked } from "../../base/config/policy-cache.js";
import type { NoticeSource } from "./notice-source.js";

/** What opens every line, so the model knows who speaks and that the config, not its work, is at fault. */
export const CONFIG_NOTICE = "reins config error:";

/**
 * The problems of the config of the project at `root` with `env`'s `REINS_*` variables, one line each. They
 * come from the policy cache, computed when the config was loaded, so asking costs a cache read; a config
 * edited meanwhile is read afresh, as the next hook would.
 */
export function configNotices(root: string, env: NodeJS.ProcessEnv): NoticeSource {
  return () => loadPolicyChecked({ cwd: root, env }).problems.map((line) => `${CONFIG_NOTICE} ${line}`);
}
