/** Plan files for `reins run`: the native reins.plan.yaml, spec-kit and task-master importers, the JSON Schema. */
export {
  importSpecKit,
  importTaskMaster,
  loadPlan,
  parsePlan,
  type LoadedPlan,
  type PlanFormat,
  type PlanOptions,
} from "./load-plan.js";
export { planJsonSchema, PLAN_SCHEMA_FILE } from "./json-schema.js";
export { checkPlan, planCheckText, uncheckedLeaves, type PlanCheck } from "./plan-check.js";
export type { PlanSettings } from "./plan-settings.js";
export { ID_PATTERN } from "./plan-schema.js";
