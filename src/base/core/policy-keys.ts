/** The keys the policy's schema allows at a place of reins.config.json, for "did you mean" on a misspelt one. */
import type * as z from "zod";
import { policySchema } from "./policy.js";

/** The parts of a zod schema's definition this walk reads; the rest of a definition is left alone. */
interface Def {
  type: string;
  getter?: () => z.ZodType;
  in?: z.ZodType;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The schema under its wrappers (lazy, pipe, default, optional...), down to an object, a record or a list. */
function unwrap(schema: z.ZodType): z.ZodType {
  for (let depth = 0; depth < 32; depth++) {
    const def = defOf(schema);
    const next =
      def.type === "lazy" ? def.getter?.() : def.type === "pipe" ? def.in : (def.innerType ?? undefined);
    if (next === undefined) return schema;
    schema = next;
  }
  return schema;
}

/**
 * The keys an object of the policy at `path` (`["budget"]`, `["loops", "tools", "Bash"]`) may hold, as the
 * schema says; `[]` where any key goes (a map such as `prices`) or the path leads nowhere.
 */
export function policyKeysAt(path: readonly (string | number)[]): string[] {
  let schema = unwrap(policySchema);
  for (const step of path) {
    const def = defOf(schema);
    const next =
      def.type === "object"
        ? typeof step === "string" && Object.hasOwn(def.shape ?? {}, step)
          ? def.shape?.[step]
          : undefined
        : def.type === "record"
          ? def.valueType
          : def.type === "array"
            ? def.element
            : undefined;
    if (next === undefined) return [];
    schema = unwrap(next);
  }
  const def = defOf(schema);
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}
