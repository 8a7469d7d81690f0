/** Small display helpers for actions. Pure. */

/** The first block of a UUID: enough to tell actions apart in a table. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** Args on one line, cut to `max` characters; "" for none. */
export function argsSummary(args: Record<string, unknown>, max = 60): string {
  if (Object.keys(args).length === 0) return "";
  const text = JSON.stringify(args);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `user:alice` → alice; other actors (agent, server) as they are. */
export function actorName(actor: string | null | undefined): string {
  if (!actor) return "—";
  return actor.replace(/^user:/, "");
}

export type ArgsParse = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** The args textarea: empty is `{}`; anything else must be one JSON object. */
export function parseArgs(text: string): ArgsParse {
  if (text.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: `Args must be a JSON object such as {"seconds": 5}, not ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}.` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** An example of each built-in kind's args, shown as the textarea's placeholder. */
export const ARGS_EXAMPLES: Record<string, string> = {
  noop: "{}",
  sleep: '{ "seconds": 5 }',
  exec: '{ "command": "uptime", "args": [], "timeoutSeconds": 60 }',
  reboot: "{}",
};
