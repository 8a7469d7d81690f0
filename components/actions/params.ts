/**
 * The actions list and the approvals inbox keep their filters and page position in the URL,
 * so a view can be shared and Back works. Pure functions: URLSearchParams in, string out.
 */
import { ACTION_ORIGINS, ACTION_STATES, type ActionOrigin, type ActionState } from "@/lib/action-status";
import { DEFAULT_PAGE_SIZE, PAGE_SIZES } from "../devices/params";

export interface ActionParams {
  states: ActionState[];
  kind: string;
  device: string;
  selector: string;
  origin: ActionOrigin | "";
  /** Only the actions of this request (issue 10: an operator's request over many devices). */
  request: string;
  /** Created at or after / before these moments: RFC 3339 text as in the URL ("" for none; validity by dateParamError). */
  createdAfter: string;
  createdBefore: string;
  limit: number;
  /** Cursors of the pages before this one; the last is this page's cursor. */
  cursors: string[];
}

export const EMPTY_ACTION_FILTERS = { states: [], kind: "", device: "", selector: "", origin: "", request: "", createdAfter: "", createdBefore: "" } as const satisfies Partial<ActionParams>;

/** RFC 3339 with an offset, as the server takes it (`2026-11-23T05:00:00Z`, `…+01:00`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function isRfc3339(value: string): boolean {
  return RFC3339.test(value) && !Number.isNaN(Date.parse(value));
}

/** Why the created-at range in the URL cannot be used (the list is not asked then), or null. */
export function dateParamError(p: Pick<ActionParams, "createdAfter" | "createdBefore">): string | null {
  for (const field of ["createdAfter", "createdBefore"] as const) {
    const v = p[field];
    if (v && !isRfc3339(v)) return `${field}: “${v}” is not an RFC 3339 date-time with an offset, e.g. 2026-11-23T05:00:00Z`;
  }
  if (p.createdAfter && p.createdBefore && Date.parse(p.createdAfter) >= Date.parse(p.createdBefore)) return "createdBefore: must be later than createdAfter";
  return null;
}

/** Quick ranges of the created-at filter: from this long ago until now. */
export const CREATED_PRESETS = [
  { id: "1h", label: "Last hour", ms: 3_600_000 },
  { id: "24h", label: "Last 24 h", ms: 24 * 3_600_000 },
  { id: "7d", label: "Last 7 days", ms: 7 * 24 * 3_600_000 },
] as const;

function list(value: string | null): string[] {
  return value ? value.split(",").map((v) => v.trim()).filter(Boolean) : [];
}

export function parseActionParams(sp: URLSearchParams): ActionParams {
  const limitRaw = Number(sp.get("limit"));
  const origin = sp.get("origin") ?? "";
  return {
    // Unknown names (an old link) are dropped rather than sent to the server to fail.
    states: list(sp.get("state")).filter((s): s is ActionState => (ACTION_STATES as string[]).includes(s)),
    kind: sp.get("kind")?.trim() ?? "",
    device: sp.get("device")?.trim() ?? "",
    // `labelSelector`, as the REST API names it (issue 10); `selector` from links made before.
    selector: sp.get("labelSelector") ?? sp.get("selector") ?? "",
    origin: (ACTION_ORIGINS as readonly string[]).includes(origin) ? (origin as ActionOrigin) : "",
    request: sp.get("request")?.trim() ?? "",
    createdAfter: sp.get("createdAfter")?.trim() ?? "",
    createdBefore: sp.get("createdBefore")?.trim() ?? "",
    limit: (PAGE_SIZES as readonly number[]).includes(limitRaw) ? limitRaw : DEFAULT_PAGE_SIZE,
    cursors: list(sp.get("after")),
  };
}

export function actionParamsToSearch(p: ActionParams): string {
  const sp = new URLSearchParams();
  if (p.states.length) sp.set("state", p.states.join(","));
  if (p.kind.trim()) sp.set("kind", p.kind.trim());
  if (p.device.trim()) sp.set("device", p.device.trim());
  if (p.selector.trim()) sp.set("labelSelector", p.selector.trim());
  if (p.origin) sp.set("origin", p.origin);
  if (p.request) sp.set("request", p.request);
  if (p.createdAfter) sp.set("createdAfter", p.createdAfter);
  if (p.createdBefore) sp.set("createdBefore", p.createdBefore);
  if (p.limit !== DEFAULT_PAGE_SIZE) sp.set("limit", String(p.limit));
  if (p.cursors.length) sp.set("after", p.cursors.join(","));
  const s = sp.toString();
  return s ? `?${s}` : "";
}

export function hasActionFilters(p: ActionParams): boolean {
  return p.states.length > 0 || p.kind.trim() !== "" || p.device.trim() !== "" || p.selector.trim() !== "" || p.origin !== "" || p.request !== "" || p.createdAfter !== "" || p.createdBefore !== "";
}

/** A link to the actions list with some filters set (the overview, a device, after a create). */
export function actionsHref(filter: Partial<Pick<ActionParams, "states" | "kind" | "device" | "selector" | "origin" | "request">> = {}): string {
  const search = actionParamsToSearch({ ...EMPTY_ACTION_FILTERS, states: [], limit: DEFAULT_PAGE_SIZE, cursors: [], ...filter });
  return `/actions${search}`;
}

export function approvalsHref(filter: Partial<Pick<ActionParams, "kind" | "device" | "selector">> = {}): string {
  const search = actionParamsToSearch({ ...EMPTY_ACTION_FILTERS, states: [], limit: DEFAULT_PAGE_SIZE, cursors: [], ...filter });
  return `/approvals${search}`;
}

/** The list input for these params (empty strings left out). */
export function listInput(p: ActionParams) {
  return {
    ...(p.states.length ? { state: p.states } : {}),
    ...(p.kind.trim() ? { kind: p.kind.trim() } : {}),
    ...(p.device.trim() ? { device: p.device.trim() } : {}),
    ...(p.selector.trim() ? { labelSelector: p.selector.trim() } : {}),
    ...(p.origin ? { origin: p.origin } : {}),
    ...(p.request ? { request: p.request } : {}),
    ...(p.createdAfter ? { createdAfter: p.createdAfter } : {}),
    ...(p.createdBefore ? { createdBefore: p.createdBefore } : {}),
    limit: p.limit,
    ...(p.cursors.length ? { cursor: p.cursors.at(-1) } : {}),
  };
}
