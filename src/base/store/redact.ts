/** Store specs with their passwords hidden, for messages. */

/** A store spec with any password hidden, for messages. */
export function redact(spec: string): string {
  return spec.replace(
    /^(rediss?(?:\+cluster)?:\/\/)([^@/]*)@/,
    (_m, scheme: string, auth: string) =>
      `${scheme}${auth.includes(":") ? `${auth.split(":")[0]}:***` : "***"}@`,
  );
}
