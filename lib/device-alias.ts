/**
 * A device's alias (issue 10): a display name an operator gives it, shown beside its name.
 * The same rules on the API and in the console's edit dialog. Not unique, not an identifier:
 * selectors, routes and the agent keep using the name.
 */
import { z } from "zod";

export const DEVICE_ALIAS_MAX = 64;

/** Trimmed; empty clears it. No control characters (they would garble a list or a log line). */
export const DeviceAlias = z
  .string()
  .trim()
  .max(DEVICE_ALIAS_MAX, `at most ${DEVICE_ALIAS_MAX} characters`)
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s), "no control characters (tabs, line breaks…)");

/** The API's input: a string (empty clears) or null (clears). */
export const DeviceAliasInput = DeviceAlias.nullable().transform((s) => (s === null || s === "" ? null : s));

/** The problem with an alias as typed, or null when it is fine. */
export function aliasProblem(value: string): string | null {
  const r = DeviceAlias.safeParse(value);
  return r.success ? null : (r.error.issues[0]?.message ?? "invalid alias");
}
