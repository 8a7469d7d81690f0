import { describe, expect, it } from "vitest";
import YAML from "yaml";
import {
  actionColumns,
  alignRows,
  deviceColumns,
  enrollmentColumns,
  fleetColumns,
  formatSelector,
  tokenColumns,
  eventCells,
  formatAge,
  formatData,
  formatDuration,
  formatLabels,
  formatTable,
} from "./output";
import type { Device, DroverEvent, Fleet } from "./types";

const now = new Date("2025-06-01T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe("formatDuration (kubectl's human durations)", () => {
  it.each([
    [0, "0s"],
    [-5 * S, "0s"],
    [499, "0s"],
    [45 * S, "45s"],
    [119 * S, "119s"],
    [2 * M, "2m"],
    [5 * M + 30 * S, "5m30s"],
    [10 * M, "10m"],
    [179 * M, "179m"],
    [3 * H, "3h"],
    [3 * H + 20 * M, "3h20m"],
    [8 * H, "8h"],
    [47 * H, "47h"],
    [2 * D, "2d"],
    [3 * D + 4 * H, "3d4h"],
    [8 * D, "8d"],
    [729 * D, "729d"],
    [730 * D, "2y"],
    [2 * 365 * D + 30 * D, "2y30d"],
    [9 * 365 * D, "9y"],
  ])("%i ms → %s", (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
});

describe("formatAge and formatLabels", () => {
  it("ages a timestamp; none and garbage are marked", () => {
    expect(formatAge(ago(90 * S), now)).toBe("90s");
    expect(formatAge(null, now)).toBe("<never>");
    expect(formatAge(undefined, now)).toBe("<never>");
    expect(formatAge("yesterday-ish", now)).toBe("<invalid>");
  });

  it("labels sorted by key, k=v joined by commas; none is <none>", () => {
    expect(formatLabels({ site: "lab", env: "dev", a: "" })).toBe("a=,env=dev,site=lab");
    expect(formatLabels({})).toBe("<none>");
    expect(formatLabels(null)).toBe("<none>");
  });
});

describe("tables", () => {
  it("aligns columns three spaces apart, no trailing spaces", () => {
    const out = formatTable(
      [
        { header: "NAME", cell: (r: { n: string; v: string }) => r.n },
        { header: "VALUE", cell: (r) => r.v },
      ],
      [
        { n: "a-long-name", v: "x" },
        { n: "b", v: "" },
      ],
    );
    expect(out).toBe("NAME          VALUE\na-long-name   x\nb\n");
  });

  it("keeps cells on one line", () => {
    const out = formatTable([{ header: "A", cell: (r: string) => r }, { header: "B", cell: () => "z" }], ["two\nlines\tand tab"]);
    expect(out.split("\n")[1]).toBe("two lines and tab   z");
  });

  it("alignRows grows widths across batches (minWidths)", () => {
    const first = alignRows([["abc", "1"]]);
    expect(first.widths).toEqual([3, 1]);
    const second = alignRows([["a", "2"]], first.widths);
    expect(second.lines).toEqual(["a     2"]);
    expect(alignRows([["abcdef", "3"]], first.widths).widths).toEqual([6, 1]);
  });

  it("devices: NAME FLEET SUMMARY UPDATED APPS LIFECYCLE LAST-SEEN LABELS", () => {
    const devices: Device[] = [
      { name: "edge-1", fleet: "edge-eu", summary: "Online", updatedStatus: "UpToDate", applicationSummary: "Healthy", lifecycle: "Enrolled", lastSeen: ago(12 * S), labels: { site: "lab", env: "dev" } },
      { name: "edge-22", fleet: null, summary: "Offline", updatedStatus: "Unknown", applicationSummary: "Unknown", lifecycle: "Enrolled", lastSeen: null, labels: {} },
    ];
    expect(formatTable(deviceColumns, devices, now)).toBe(
      [
        "NAME      FLEET     SUMMARY   UPDATED    APPS      LIFECYCLE   LAST-SEEN   LABELS",
        "edge-1    edge-eu   Online    UpToDate   Healthy   Enrolled    12s         env=dev,site=lab",
        "edge-22   <none>    Offline   Unknown    Unknown   Enrolled    <never>     <none>",
        "",
      ].join("\n"),
    );
  });

  it("fleets: members per update status, the selector as text", () => {
    const fleet: Fleet = {
      metadata: { name: "edge-eu", generation: 3, createdAt: ago(2 * D) },
      spec: { selector: { matchLabels: { site: "eu" }, matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }, { key: "legacy", operator: "DoesNotExist" }] }, template: { spec: { version: "2.1.0" } } },
      status: { templateVersion: "3", conditions: [], devices: { total: 12, upToDate: 9, updating: 2, outOfDate: 1, unknown: 0 }, rollout: null },
    };
    expect(formatTable(fleetColumns, [fleet], now)).toBe(
      [
        "NAME      TEMPLATE   VERSION   DEVICES   UP-TO-DATE   UPDATING   OUT-OF-DATE   ROLLOUT   AGE   SELECTOR",
        "edge-eu   3          2.1.0     12        9            2          1             <none>    2d    site=eu,tier in (a,b),!legacy",
        "",
      ].join("\n"),
    );
    expect(formatSelector({})).toBe("<all>");
  });

  it("actions and enrollments", () => {
    const action = { id: "0b1c", device: "edge-1", kind: "exec", state: "PENDING_APPROVE", origin: "user", createdAt: ago(3 * M) };
    expect(formatTable(actionColumns, [action], now)).toBe("ID     DEVICE   KIND   STATE             ORIGIN   AGE\n0b1c   edge-1   exec   PENDING_APPROVE   user     3m\n");
    const enrollment = { id: "e1", deviceName: "edge-9", status: "Pending", labels: { rack: "4" }, clientAddress: "10.0.0.7", createdAt: ago(2 * D) };
    expect(formatTable(enrollmentColumns, [enrollment], now)).toBe("ID   DEVICE   STATUS    LABELS   ADDRESS    AGE\ne1   edge-9   Pending   rack=4   10.0.0.7   2d\n");
  });

  it("tokens: * marks the current one, <none> for no name, <never> for unused", () => {
    const base = { username: "admin", status: "Active", expiresAt: ago(-D), revokedAt: null, revokedBy: null };
    const tokens = [
      { ...base, id: "t2", name: "ci", createdAt: ago(3 * M), lastUsedAt: ago(12 * 1000), current: true },
      { ...base, id: "t1", name: null, createdAt: ago(2 * D), lastUsedAt: null, current: false, status: "Revoked" },
    ];
    expect(formatTable(tokenColumns, tokens, now)).toBe(
      [
        "CURRENT   ID   NAME     USER    STATUS    LAST-USED   AGE",
        "*         t2   ci       admin   Active    12s         3m",
        "          t1   <none>   admin   Revoked   <never>     2d",
        "",
      ].join("\n"),
    );
  });

  it("events: time to the second, Kind/name, '-' for no reason", () => {
    const e: DroverEvent = { id: 1, time: "2025-06-01T11:59:58.123Z", objectKind: "Device", objectName: "edge-1", type: "Nudged", reason: "", message: "", actor: "user:admin" };
    expect(eventCells([e])).toEqual([["2025-06-01T11:59:58Z", "Device/edge-1", "Nudged", "-", "user:admin", ""]]);
  });
});

describe("json and yaml", () => {
  const data = { items: [{ name: "edge-1", labels: { site: "lab" }, lastSeen: null }], total: 1 };

  it("json is indented and round-trips", () => {
    const out = formatData(data, "json");
    expect(out.endsWith("}\n")).toBe(true);
    expect(out).toContain('\n  "items": [');
    expect(JSON.parse(out)).toEqual(data);
  });

  it("yaml round-trips", () => {
    const out = formatData(data, "yaml");
    expect(out).toContain("items:\n  - name: edge-1\n");
    expect(YAML.parse(out)).toEqual(data);
  });
});
