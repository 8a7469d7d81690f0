/**
 * Read models for devices: the list (label selector and status filters, keyset pages),
 * one device in full, and counts per status axis for the overview.
 */
import { parseSelector, type LabelSelector } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import type { Dialect, Prisma } from "../db";
import { containsIgnoringCase, dialectOfDb } from "../lib/dialect-sql";
import { invalid, notFound } from "../errors";
import { renderedSpecOf } from "./work";
import { outOfDateReason, parseReported } from "./status";
import { multipleOwnersMessage } from "../fleets/membership";
import { rolloutNotes } from "../rollouts/device-notes";
import { inventoryView, type Usage } from "./inventory";

export function selectorWhere(selector: LabelSelector): Prisma.DeviceWhereInput[] {
  return selector.map((r): Prisma.DeviceWhereInput => {
    switch (r.op) {
      case "=":
        return { labels: { some: { key: r.key, value: r.values[0] } } };
      case "!=":
        return { labels: { none: { key: r.key, value: r.values[0] } } };
      case "in":
        return { labels: { some: { key: r.key, value: { in: r.values } } } };
      case "notin":
        return { labels: { none: { key: r.key, value: { in: r.values } } } };
      case "exists":
        return { labels: { some: { key: r.key } } };
      case "!exists":
        return { labels: { none: { key: r.key } } };
    }
  });
}

export interface DeviceFilter {
  labelSelector?: string | undefined;
  summary?: string[] | undefined;
  updated?: string[] | undefined;
  applicationSummary?: string[] | undefined;
  lifecycle?: string[] | undefined;
  /** Members of this fleet (Device.owner). */
  fleet?: string | undefined;
  /** Substring of the name. */
  search?: string | undefined;
  /**
   * Decommissioned devices are hidden unless "show" (issue 10: they are history, not fleet),
   * or unless the lifecycle filter asks for them by name.
   */
  decommissioned?: "hide" | "show" | undefined;
}

/** Whether this filter hides Decommissioned devices. */
export function hidesDecommissioned(filter: DeviceFilter): boolean {
  return filter.decommissioned !== "show" && !filter.lifecycle?.includes("Decommissioned");
}

/** `dialect`: the name search is case-insensitive on both (SQLite's LIKE, PostgreSQL's ILIKE). */
export function deviceWhere(filter: DeviceFilter, dialect: Dialect): Prisma.DeviceWhereInput {
  const and: Prisma.DeviceWhereInput[] = selectorWhere(parseSelector(filter.labelSelector ?? ""));
  if (filter.summary?.length) and.push({ summary: { in: filter.summary } });
  if (filter.updated?.length) and.push({ updatedStatus: { in: filter.updated } });
  if (filter.applicationSummary?.length) and.push({ applicationSummary: { in: filter.applicationSummary } });
  if (filter.lifecycle?.length) and.push({ lifecycle: { in: filter.lifecycle } });
  if (filter.fleet) and.push({ owner: filter.fleet });
  // The alias too: operators know devices by the names they gave them.
  if (filter.search) {
    const contains = containsIgnoringCase(dialect, filter.search);
    and.push({ OR: [{ name: contains }, { alias: contains }] });
  }
  if (hidesDecommissioned(filter)) and.push({ lifecycle: { not: "Decommissioned" } });
  return { AND: and };
}

// ---------------------------------------------------------------------------------------
// Sorting (issue 10). Keyset pages for every sort: the cursor holds the last row's sort value
// and name, so a page costs the same on page 1 and page 200 and rows never repeat or vanish
// when others change between pages (an offset would). Ties break by name, in the sort's own
// direction, so an index on (column, name) can serve the scan either way.

export const DEVICE_SORTS = {
  name: "name",
  status: "summary",
  fleet: "owner",
  updated: "updatedStatus",
  applications: "applicationSummary",
  lifecycle: "lifecycle",
  lastSeen: "lastSeen",
  created: "createdAt",
} as const;
export type DeviceSort = keyof typeof DEVICE_SORTS;
export type SortOrder = "asc" | "desc";
type SortColumn = (typeof DEVICE_SORTS)[DeviceSort];
const NULLABLE: ReadonlySet<SortColumn> = new Set(["owner", "lastSeen"]);
const DATES: ReadonlySet<SortColumn> = new Set(["lastSeen", "createdAt"]);

/** Sorted by name, the cursor is the bare name (as before sorting existed); otherwise an opaque token. */
function encodeCursor(sort: DeviceSort, row: Record<string, unknown>): string {
  const column = DEVICE_SORTS[sort];
  const name = row.name as string;
  if (column === "name") return name;
  const v = row[column];
  const value = v instanceof Date ? v.toISOString() : ((v as string | null | undefined) ?? null);
  return Buffer.from(JSON.stringify([value, name])).toString("base64url");
}

function decodeCursor(sort: DeviceSort, cursor: string): { value: string | Date | null; name: string } {
  const column = DEVICE_SORTS[sort];
  if (column === "name") return { value: cursor, name: cursor };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = null;
  }
  const ok = Array.isArray(parsed) && parsed.length === 2 && typeof parsed[1] === "string" && (parsed[0] === null || typeof parsed[0] === "string");
  const [value, name] = ok ? (parsed as [string | null, string]) : [null, ""];
  const date = value !== null && DATES.has(column) ? new Date(value) : null;
  if (!ok || (value === null && !NULLABLE.has(column)) || (date && Number.isNaN(date.getTime()))) {
    throw invalid(`cursor: not a cursor of this list sorted by ${sort} (use nextCursor from the previous page with the same sort)`);
  }
  return { value: date ?? value, name };
}

/**
 * Null is the smallest value (first ascending, last descending): SQLite's own order, so its
 * indexes serve both directions, and spelled out so PostgreSQL sorts the same.
 */
function sortOrderBy(sort: DeviceSort, order: SortOrder): Prisma.DeviceOrderByWithRelationInput[] {
  const column = DEVICE_SORTS[sort];
  if (column === "name") return [{ name: order }];
  const first = NULLABLE.has(column) ? { [column]: { sort: order, nulls: order === "asc" ? "first" : "last" } } : { [column]: order };
  return [first as Prisma.DeviceOrderByWithRelationInput, { name: order }];
}

/** The rows after the cursor's row in this order. */
function afterCursor(sort: DeviceSort, order: SortOrder, cursor: string): Prisma.DeviceWhereInput {
  const column = DEVICE_SORTS[sort];
  const { value, name } = decodeCursor(sort, cursor);
  const past = order === "asc" ? "gt" : "lt";
  const nameAfter = { name: { [past]: name } };
  if (column === "name") return nameAfter;
  if (value === null) {
    // Nulls come first ascending (then every non-null), last descending (then nothing).
    const nullsAfter: Prisma.DeviceWhereInput = { AND: [{ [column]: null }, nameAfter] };
    return order === "asc" ? { OR: [nullsAfter, { NOT: { [column]: null } }] } : nullsAfter;
  }
  const or: Prisma.DeviceWhereInput[] = [{ [column]: { [past]: value } }, { AND: [{ [column]: value }, nameAfter] }];
  if (order === "desc" && NULLABLE.has(column)) or.push({ [column]: null });
  return { OR: or };
}

const listSelect = {
  id: true,
  name: true,
  alias: true,
  platform: true,
  role: true,
  lastSeen: true,
  summary: true,
  updatedStatus: true,
  updatingReason: true,
  applicationSummary: true,
  lifecycle: true,
  labels: { select: { key: true, value: true } },
  // For the fleet column and the OutOfDate reason.
  owner: true,
  renderedVersion: true,
  templateVersion: true,
  reported: true,
  ownerFleet: { select: { templateVersion: true } },
  // The agent column, and its "older than this server supports" warning (issue 12).
  agentVersion: true,
  // Issue 23: shown as revoked (a badge by its name).
  credentialRevokedAt: true,
} satisfies Prisma.DeviceSelect;

const withNote = (reason: string | null, note: string | undefined) => (reason !== null && note ? `${reason}; ${note}` : reason);

function labelsObject(labels: { key: string; value: string }[]): Record<string, string> {
  return Object.fromEntries(labels.map((l) => [l.key, l.value]));
}

export interface DevicePage {
  limit: number;
  /** `nextCursor` of the previous page, made with the same sort and order. */
  cursor?: string | undefined;
  sort?: DeviceSort | undefined;
  order?: SortOrder | undefined;
}

/**
 * Devices a page at a time, by name or by another column (`sort`, `order`). Also says how many
 * Decommissioned devices the filter hides (`hiddenDecommissioned`, 0 when none are hidden).
 */
export async function listDevices(ctx: ServerContext, filter: DeviceFilter, page: DevicePage) {
  const sort = page.sort ?? "name";
  const order = page.order ?? "asc";
  const dialect = dialectOfDb(ctx.db);
  const where = deviceWhere(filter, dialect);
  const hidden = hidesDecommissioned(filter);
  const [rows, byLifecycle] = await Promise.all([
    ctx.db.device.findMany({
      where: page.cursor ? { AND: [where, afterCursor(sort, order, page.cursor)] } : where,
      orderBy: sortOrderBy(sort, order),
      take: page.limit + 1,
      select: { ...listSelect, createdAt: true },
    }),
    // One count for both numbers: the filter's matches by lifecycle (a second count of the
    // hidden ones evaluated the label selector twice).
    ctx.db.device.groupBy({ by: ["lifecycle"], where: deviceWhere({ ...filter, decommissioned: "show" }, dialect), _count: { _all: true } }),
  ]);
  let total = 0;
  let hiddenDecommissioned = 0;
  for (const g of byLifecycle) {
    if (hidden && g.lifecycle === "Decommissioned") hiddenDecommissioned += g._count._all;
    else total += g._count._all;
  }
  const shown = rows.slice(0, page.limit);
  // Members its fleet's rollout holds back say so (waiting for the canary, its batch...).
  const notes = await rolloutNotes(ctx.db, shown);
  const items = shown.map(({ reported, ownerFleet, ...d }) => ({
    ...d,
    labels: labelsObject(d.labels),
    fleet: d.owner,
    updatedInfo: withNote(outOfDateReason({ ...d, reported: parseReported(reported), fleetTemplateVersion: ownerFleet?.templateVersion ?? null }, d.updatedStatus), notes.get(d.name)),
  }));
  const last = shown.at(-1);
  const nextCursor = rows.length > page.limit && last ? encodeCursor(sort, last) : null;
  return { items, total, nextCursor, hiddenDecommissioned };
}
export type DeviceListItem = Awaited<ReturnType<typeof listDevices>>["items"][number];

export async function getDevice(ctx: ServerContext, name: string) {
  const d = await ctx.db.device.findUnique({
    where: { name },
    select: {
      ...listSelect,
      agentVersion: true,
      renderedSpecId: true,
      spec: true,
      renderedAt: true,
      multipleOwners: true,
      conflictPaused: true,
      decommissionRequestedAt: true,
      decommissionRequestedBy: true,
      decommissioning: true,
      createdAt: true,
      enrollmentId: true,
      inventory: { select: { system: true, systemAt: true, samples: true } },
    },
  });
  if (!d) throw notFound(`device "${name}"`);
  const reported = parseReported(d.reported);
  const decommissionReport = reported?.decommissioning;
  const { ownerFleet, renderedSpecId, multipleOwners, inventory, ...rest } = d;
  const fleetTemplateVersion = ownerFleet?.templateVersion ?? null;
  const overlap = multipleOwners ? (JSON.parse(multipleOwners) as string[]) : null;
  const revoked = d.credentialRevokedAt ? await revocationCondition(ctx, d.name, d.credentialRevokedAt) : null;
  return {
    ...rest,
    labels: labelsObject(d.labels),
    fleet: d.owner,
    fleetTemplateVersion,
    spec: await renderedSpecOf(ctx, { renderedVersion: d.renderedVersion, templateVersion: d.templateVersion, renderedSpecId, spec: d.spec }),
    reported,
    updatedInfo: withNote(outOfDateReason({ ...d, reported, fleetTemplateVersion }, d.updatedStatus), (await rolloutNotes(ctx.db, [d])).get(d.name)),
    conditions: [
      ...conditionsOf(d, reported),
      ...(overlap
        ? [{ type: "MultipleOwners", status: "True" as const, reason: "MultipleOwners", message: multipleOwnersMessage(d.owner, overlap), lastTransitionTime: null }]
        : []),
      ...(revoked ? [revoked] : []),
    ],
    decommissionInfo: decommissionReport?.info ?? null,
    inventory: inventoryView(inventory, (reported as { usage?: Usage } | null)?.usage ?? null, d.lastSeen),
  };
}
export type DeviceDetail = Awaited<ReturnType<typeof getDevice>>;

/**
 * Issue 23: the CredentialRevoked condition, when and why: an operator's revocation (its event
 * says by whom and why: reason `Revoked`), or the end of a decommission (reason `Decommissioned`).
 */
async function revocationCondition(ctx: ServerContext, name: string, at: Date) {
  const event = await ctx.db.event.findFirst({
    where: { objectKind: "Device", objectName: name, type: "CredentialRevoked" },
    orderBy: { id: "desc" },
    select: { actor: true, message: true },
  });
  return {
    type: "CredentialRevoked",
    status: "True" as const,
    reason: event ? "Revoked" : "Decommissioned",
    message: event ? `revoked by ${event.actor.replace(/^user:/, "")}: ${event.message}` : "revoked when its decommission completed",
    lastTransitionTime: at.toISOString(),
  };
}

/** Kubernetes-style conditions (DESIGN.md §1) from what the agent reported. */
function conditionsOf(
  d: { decommissioning: string | null; lastSeen: Date | null; summary: string },
  reported: ReturnType<typeof parseReported>,
) {
  const at = d.lastSeen?.toISOString() ?? null;
  const conditions: { type: string; status: "True" | "False" | "Unknown"; reason: string; message: string; lastTransitionTime: string | null }[] = [];
  const updating = reported?.conditions.updating;
  conditions.push({
    type: "Updating",
    status: reported === null ? "Unknown" : updating?.status ? "True" : "False",
    reason: updating?.reason ?? "",
    message: updating?.info ?? "",
    lastTransitionTime: at,
  });
  conditions.push({
    type: "Rebooting",
    status: reported === null ? "Unknown" : reported.conditions.rebooting ? "True" : "False",
    reason: reported?.conditions.rebooting ? "Rebooting" : "",
    message: "",
    lastTransitionTime: at,
  });
  if (d.decommissioning) {
    conditions.push({
      type: "DeviceDecommissioning",
      status: "True",
      reason: d.decommissioning,
      message: reported?.decommissioning?.info ?? "",
      lastTransitionTime: at,
    });
  }
  return conditions;
}

export const STATUS_AXES = {
  summary: "summary",
  updated: "updatedStatus",
  applicationSummary: "applicationSummary",
  lifecycle: "lifecycle",
} as const;

/** Counts per value of every status axis: GROUP BYs on indexed columns. */
export async function deviceCounts(ctx: ServerContext) {
  type Axes = Record<keyof typeof STATUS_AXES, Record<string, number>>;
  const counts: Axes = { summary: {}, updated: {}, applicationSummary: {}, lifecycle: {} };
  // One raw statement: Prisma's four groupBys over 10,000 rows held the event loop for long.
  for (const r of await ctx.fast.statusCounts()) counts[r.axis as keyof Axes][r.value] = r.n;

  const total = Object.values(counts.summary).reduce((a, b) => a + b, 0);
  const pendingEnrollments = await ctx.db.enrollmentRequest.count({ where: { status: "Pending" } });
  return { total, pendingEnrollments, ...counts };
}
