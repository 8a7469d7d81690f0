/**
 * The devices page keeps every filter and its page position in the URL, so a view can be
 * shared and the back button works. Pure functions: URLSearchParams in, URLSearchParams out.
 */
import { STATUS_AXES, type StatusAxis } from "../status/axes";

export const PAGE_SIZES = [25, 50, 100, 200] as const;

/** The server's sort keys (devices.list `sort`); the URL says `sort=lastSeen&order=desc`. */
export const DEVICE_SORTS = ["name", "status", "fleet", "updated", "applications", "lifecycle", "lastSeen", "created"] as const;
export type DeviceSort = (typeof DEVICE_SORTS)[number];
export type SortOrder = "asc" | "desc";
export const DEFAULT_PAGE_SIZE = 50;

export interface DeviceParams {
  selector: string;
  search: string;
  /** Members of this fleet only (`fleet=` in the URL); "" for any. */
  fleet: string;
  status: Record<StatusAxis["key"], string[]>;
  sort: DeviceSort;
  order: SortOrder;
  /** Decommissioned devices listed too (`decommissioned=show`); hidden by default. */
  showDecommissioned: boolean;
  limit: number;
  /** Cursors of the pages before this one; the last is this page's cursor. */
  cursors: string[];
}

function list(value: string | null): string[] {
  return value ? value.split(",").map((v) => v.trim()).filter(Boolean) : [];
}

export function parseDeviceParams(sp: URLSearchParams): DeviceParams {
  const limitRaw = Number(sp.get("limit"));
  const limit = (PAGE_SIZES as readonly number[]).includes(limitRaw) ? limitRaw : DEFAULT_PAGE_SIZE;
  const status = Object.fromEntries(STATUS_AXES.map((a) => [a.key, list(sp.get(a.param))])) as DeviceParams["status"];
  return {
    // `labelSelector`, as the REST API names it (issue 10); `selector` from links made before.
    selector: sp.get("labelSelector") ?? sp.get("selector") ?? "",
    search: sp.get("q") ?? "",
    fleet: sp.get("fleet") ?? "",
    status,
    sort: (DEVICE_SORTS as readonly string[]).includes(sp.get("sort") ?? "") ? (sp.get("sort") as DeviceSort) : "name",
    order: sp.get("order") === "desc" ? "desc" : "asc",
    showDecommissioned: sp.get("decommissioned") === "show",
    limit,
    cursors: list(sp.get("after")),
  };
}

export function deviceParamsToSearch(p: DeviceParams): string {
  const sp = new URLSearchParams();
  if (p.selector.trim()) sp.set("labelSelector", p.selector.trim());
  if (p.search.trim()) sp.set("q", p.search.trim());
  if (p.fleet) sp.set("fleet", p.fleet);
  for (const axis of STATUS_AXES) {
    const values = p.status[axis.key];
    if (values.length) sp.set(axis.param, values.join(","));
  }
  if (p.sort !== "name") sp.set("sort", p.sort);
  if (p.order !== "asc") sp.set("order", p.order);
  if (p.showDecommissioned) sp.set("decommissioned", "show");
  if (p.limit !== DEFAULT_PAGE_SIZE) sp.set("limit", String(p.limit));
  if (p.cursors.length) sp.set("after", p.cursors.join(","));
  const s = sp.toString();
  return s ? `?${s}` : "";
}

/** A link to the devices page with one status filter set (the overview's counts). */
export function devicesHref(filter: Partial<Record<StatusAxis["key"], string>> = {}): string {
  const sp = new URLSearchParams();
  for (const axis of STATUS_AXES) {
    const v = filter[axis.key];
    if (v) sp.set(axis.param, v);
  }
  const s = sp.toString();
  return s ? `/devices?${s}` : "/devices";
}
