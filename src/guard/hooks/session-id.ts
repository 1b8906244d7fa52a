/** The hook input's `session_id`, the same for every agent. */
import { oneLineText } from "../../base/core/one-line.js";

/**
 * The schema of a hook input's `session_id`, the same for every agent: it becomes the scope of the call's
 * events. A function, so that it is built only with the schema of the one agent a hook process parses.
 */
export const sessionIdSchema = () => oneLineText(256);
