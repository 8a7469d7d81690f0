/**
 * Read models for devices: the list (label selector and status filters, keyset pages),
 * one device in full, and counts per status axis for the overview.
 */
import { parseSelector, type LabelSelector } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import type { Prisma } from "../db";
import { notFound } from "../errors";
import { renderedSpecOf } from "./work";
import { outOfDateReason, parseReported } from "./status";
import { multipleOwnersMessage } from "../fleets/membership";
import { rolloutNotes } from "../rollouts/device-notes";

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
}

export function deviceWhere(filter: DeviceFilter): Prisma.DeviceWhereInput {
  const and: Prisma.DeviceWhereInput[] = selectorWhere(parseSelector(filter.labelSelector ?? ""));
  if (filter.summary?.length) and.push({ summary: { in: filter.summary } });
  if (filter.updated?.length) and.push({ updatedStatus: { in: filter.updated } });
  if (filter.applicationSummary?.length) and.push({ applicationSummary: { in: filter.applicationSummary } });
  if (filter.lifecycle?.length) and.push({ lifecycle: { in: filter.lifecycle } });
  if (filter.fleet) and.push({ owner: filter.fleet });
  if (filter.search) and.push({ name: { contains: filter.search } });
  return { AND: and };
}

const listSelect = {
  id: true,
  name: true,
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
} satisfies Prisma.DeviceSelect;

const withNote = (reason: string | null, note: string | undefined) => (reason !== null && note ? `${reason}; ${note}` : reason);

function labelsObject(labels: { key: string; value: string }[]): Record<string, string> {
  return Object.fromEntries(labels.map((l) => [l.key, l.value]));
}

/** Devices by name, a page at a time: `cursor` is the last name of the previous page. */
export async function listDevices(ctx: ServerContext, filter: DeviceFilter, page: { limit: number; cursor?: string | undefined }) {
  const where = deviceWhere(filter);
  const [rows, total] = await Promise.all([
    ctx.db.device.findMany({
      where: page.cursor ? { AND: [where, { name: { gt: page.cursor } }] } : where,
      orderBy: { name: "asc" },
      take: page.limit + 1,
      select: listSelect,
    }),
    ctx.db.device.count({ where }),
  ]);
  const shown = rows.slice(0, page.limit);
  // Members its fleet's rollout holds back say so (waiting for the canary, its batch...).
  const notes = await rolloutNotes(ctx.db, shown);
  const items = shown.map(({ reported, ownerFleet, ...d }) => ({
    ...d,
    labels: labelsObject(d.labels),
    fleet: d.owner,
    updatedInfo: withNote(outOfDateReason({ ...d, reported: parseReported(reported), fleetTemplateVersion: ownerFleet?.templateVersion ?? null }, d.updatedStatus), notes.get(d.name)),
  }));
  const nextCursor = rows.length > page.limit ? (items[items.length - 1]?.name ?? null) : null;
  return { items, total, nextCursor };
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
      credentialRevokedAt: true,
      createdAt: true,
      enrollmentId: true,
    },
  });
  if (!d) throw notFound(`device "${name}"`);
  const reported = parseReported(d.reported);
  const decommissionReport = reported?.decommissioning;
  const { ownerFleet, renderedSpecId, multipleOwners, ...rest } = d;
  const fleetTemplateVersion = ownerFleet?.templateVersion ?? null;
  const overlap = multipleOwners ? (JSON.parse(multipleOwners) as string[]) : null;
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
    ],
    decommissionInfo: decommissionReport?.info ?? null,
  };
}
export type DeviceDetail = Awaited<ReturnType<typeof getDevice>>;

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
  if (ctx.fast) {
    // One raw statement: Prisma's four groupBys over 10,000 rows held the event loop for long.
    for (const r of ctx.fast.statusCounts()) counts[r.axis as keyof Axes][r.value] = r.n;
  } else {
    const [summary, updated, applicationSummary, lifecycle] = await Promise.all([
      ctx.db.device.groupBy({ by: ["summary"], _count: { _all: true } }),
      ctx.db.device.groupBy({ by: ["updatedStatus"], _count: { _all: true } }),
      ctx.db.device.groupBy({ by: ["applicationSummary"], _count: { _all: true } }),
      ctx.db.device.groupBy({ by: ["lifecycle"], _count: { _all: true } }),
    ]);
    counts.summary = Object.fromEntries(summary.map((g) => [g.summary, g._count._all]));
    counts.updated = Object.fromEntries(updated.map((g) => [g.updatedStatus, g._count._all]));
    counts.applicationSummary = Object.fromEntries(applicationSummary.map((g) => [g.applicationSummary, g._count._all]));
    counts.lifecycle = Object.fromEntries(lifecycle.map((g) => [g.lifecycle, g._count._all]));
  }
  const total = Object.values(counts.summary).reduce((a, b) => a + b, 0);
  const pendingEnrollments = await ctx.db.enrollmentRequest.count({ where: { status: "Pending" } });
  return { total, pendingEnrollments, ...counts };
}
