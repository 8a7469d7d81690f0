/**
 * Output: aligned tables like kubectl's (upper-case headers, columns three spaces apart,
 * ages such as 45s, 5m30s, 3h, 2d4h), and json/yaml of the API's objects as they came.
 */
import { yaml } from "./yaml";
import type { Action, ApiToken, Device, DroverEvent, Enrollment, Fleet, Labels, LabelSelectorObject } from "./types";

export const FORMATS = ["table", "json", "yaml"] as const;
export type Format = (typeof FORMATS)[number];

export interface Column<T> {
  header: string;
  cell: (row: T, now: Date) => string;
}

const GAP = "   ";

/**
 * Pads cells to column widths (at least `minWidths`, so a stream of batches can stay aligned)
 * and returns the lines and the widths used. The last column is not padded.
 */
export function alignRows(cells: string[][], minWidths: number[] = []): { lines: string[]; widths: number[] } {
  const widths = [...minWidths];
  for (const row of cells) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const lines = cells.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join(GAP)
      .trimEnd(),
  );
  return { lines, widths };
}

export function formatTable<T>(columns: Column<T>[], rows: T[], now = new Date()): string {
  const cells = [columns.map((c) => c.header), ...rows.map((row) => columns.map((c) => clean(c.cell(row, now))))];
  return alignRows(cells).lines.join("\n") + "\n";
}

export function formatData(data: unknown, format: Exclude<Format, "table">): string {
  return format === "json" ? JSON.stringify(data, null, 2) + "\n" : yaml().stringify(data);
}

/** Cells are one line: newlines and tabs would break the columns. */
function clean(value: string): string {
  return value.replace(/[\r\n\t]+/g, " ");
}

/** kubectl's human duration: 45s, 5m30s, 42m, 3h20m, 20h, 3d4h, 40d, 2y30d, 9y. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (years < 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** The age of a timestamp, `<never>` for none and `<invalid>` for garbage. */
export function formatAge(time: string | null | undefined, now: Date): string {
  if (!time) return "<never>";
  const at = Date.parse(time);
  return Number.isNaN(at) ? "<invalid>" : formatDuration(now.getTime() - at);
}

export function formatLabels(labels: Labels | null | undefined): string {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "<none>";
}

export const deviceColumns: Column<Device>[] = [
  { header: "NAME", cell: (d) => d.name },
  { header: "FLEET", cell: (d) => d.fleet ?? "<none>" },
  { header: "SUMMARY", cell: (d) => d.summary },
  { header: "UPDATED", cell: (d) => d.updatedStatus },
  { header: "APPS", cell: (d) => d.applicationSummary },
  { header: "LIFECYCLE", cell: (d) => d.lifecycle },
  { header: "LAST-SEEN", cell: (d, now) => formatAge(d.lastSeen, now) },
  { header: "LABELS", cell: (d) => formatLabels(d.labels) },
];

/** A label selector object as the text form: `site=lab,env in (dev,test),!legacy`. */
export function formatSelector(selector: LabelSelectorObject | null | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    if (e.operator === "In") parts.push(`${e.key} in (${(e.values ?? []).join(",")})`);
    else if (e.operator === "NotIn") parts.push(`${e.key} notin (${(e.values ?? []).join(",")})`);
    else if (e.operator === "Exists") parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.length ? parts.join(",") : "<all>";
}

/** Like kubectl's deployments: how many members run the fleet's template version. */
export const fleetColumns: Column<Fleet>[] = [
  { header: "NAME", cell: (f) => f.metadata.name },
  { header: "TEMPLATE", cell: (f) => f.status.templateVersion },
  { header: "VERSION", cell: (f) => f.spec.template.spec.version },
  { header: "DEVICES", cell: (f) => String(f.status.devices.total) },
  { header: "UP-TO-DATE", cell: (f) => String(f.status.devices.upToDate) },
  { header: "UPDATING", cell: (f) => String(f.status.devices.updating) },
  { header: "OUT-OF-DATE", cell: (f) => String(f.status.devices.outOfDate) },
  { header: "ROLLOUT", cell: (f) => f.status.rollout?.phase ?? "<none>" },
  { header: "AGE", cell: (f, now) => formatAge(f.metadata.createdAt, now) },
  { header: "SELECTOR", cell: (f) => formatSelector(f.spec.selector) },
];

export const actionColumns: Column<Action>[] = [
  { header: "ID", cell: (a) => a.id },
  { header: "DEVICE", cell: (a) => a.device },
  { header: "KIND", cell: (a) => a.kind },
  { header: "STATE", cell: (a) => a.state },
  { header: "ORIGIN", cell: (a) => a.origin },
  { header: "AGE", cell: (a, now) => formatAge(a.createdAt, now) },
];

export const enrollmentColumns: Column<Enrollment>[] = [
  { header: "ID", cell: (e) => e.id },
  { header: "DEVICE", cell: (e) => e.deviceName },
  { header: "STATUS", cell: (e) => e.status },
  { header: "LABELS", cell: (e) => formatLabels(e.labels) },
  { header: "ADDRESS", cell: (e) => e.clientAddress ?? "<unknown>" },
  { header: "AGE", cell: (e, now) => formatAge(e.createdAt, now) },
];

/** Like kubectl's contexts: `*` marks the token this command ran with. */
export const tokenColumns: Column<ApiToken>[] = [
  { header: "CURRENT", cell: (t) => (t.current ? "*" : "") },
  { header: "ID", cell: (t) => t.id },
  { header: "NAME", cell: (t) => t.name ?? "<none>" },
  { header: "USER", cell: (t) => t.username },
  { header: "STATUS", cell: (t) => t.status },
  { header: "LAST-USED", cell: (t, now) => formatAge(t.lastUsedAt, now) },
  { header: "AGE", cell: (t, now) => formatAge(t.createdAt, now) },
];

/** Events are an audit log: absolute times (UTC, to the second), not ages. */
export const eventColumns: Column<DroverEvent>[] = [
  { header: "TIME", cell: (e) => e.time.replace(/\.\d+Z$/, "Z") },
  { header: "OBJECT", cell: (e) => `${e.objectKind}/${e.objectName}` },
  { header: "TYPE", cell: (e) => e.type },
  { header: "REASON", cell: (e) => e.reason || "-" },
  { header: "ACTOR", cell: (e) => e.actor },
  { header: "MESSAGE", cell: (e) => e.message },
];

export function eventCells(events: DroverEvent[], now = new Date()): string[][] {
  return events.map((e) => eventColumns.map((c) => clean(c.cell(e, now))));
}
