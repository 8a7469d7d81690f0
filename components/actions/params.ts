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
  limit: number;
  /** Cursors of the pages before this one; the last is this page's cursor. */
  cursors: string[];
}

export const EMPTY_ACTION_FILTERS = { states: [], kind: "", device: "", selector: "", origin: "", request: "" } as const satisfies Partial<ActionParams>;

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
  if (p.limit !== DEFAULT_PAGE_SIZE) sp.set("limit", String(p.limit));
  if (p.cursors.length) sp.set("after", p.cursors.join(","));
  const s = sp.toString();
  return s ? `?${s}` : "";
}

export function hasActionFilters(p: ActionParams): boolean {
  return p.states.length > 0 || p.kind.trim() !== "" || p.device.trim() !== "" || p.selector.trim() !== "" || p.origin !== "" || p.request !== "";
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
    limit: p.limit,
    ...(p.cursors.length ? { cursor: p.cursors.at(-1) } : {}),
  };
}
