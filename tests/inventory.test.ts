/**
 * The inventory (issue 10) against a real server: host facts in the heartbeat kept across
 * heartbeats that carry usage alone, a usage history of one sample a minute bounded at 120,
 * bad `system` input refused with nothing changed, and the alias and labels edit (REST PATCH
 * and tRPC) with its validation and roles. Both write paths: the SQLite fast path and Prisma.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError, heartbeatBody, uniqueName } from "./helpers/devices";
import { enrollAs } from "./helpers/actions";
import { createUser } from "../server/auth/auth";
import { USAGE_SAMPLES, appendSample, recordInventory, type UsageSample } from "../server/devices/inventory";
import type { EnrolledDevice } from "./helpers/devices";

const facts = {
  hostname: "edge-7.example.net",
  os: { name: "Debian GNU/Linux", version: "12 (bookworm)" },
  kernel: "6.1.0-28-amd64",
  arch: "x86_64",
  ips: ["10.1.2.3", "2001:db8::7"],
  bootTime: "2026-11-20T08:00:00.000Z",
  cpus: 4,
  agent: { version: "1.2.3", startedAt: "2026-11-23T05:00:00.000Z" },
};
const usage = (cpu: number) => ({ cpuPercent: cpu, memory: { usedBytes: 3 * 2 ** 30, totalBytes: 8 * 2 ** 30 }, disk: { usedBytes: 20e9, totalBytes: 64e9 } });

interface DeviceView {
  name: string;
  alias: string | null;
  labels: Record<string, string>;
  inventory: {
    system: typeof facts | null;
    systemAt: string | null;
    usage: ReturnType<typeof usage> | null;
    usageAt: string | null;
    history: { at: string; cpuPercent: number | null; memoryPercent: number | null; diskPercent: number | null }[];
  };
}

const PASSWORDS = { vera: "viewer-password-1", otto: "operator-password-1" };

describe("inventory", () => {
  let s: TestServer;
  const realNow = () => new Date();
  beforeAll(async () => {
    s = await startTestServer();
    await createUser(s.auth, s.ctx.db, { username: "vera", password: PASSWORDS.vera, role: "viewer" });
    await createUser(s.auth, s.ctx.db, { username: "otto", password: PASSWORDS.otto, role: "operator" });
  });
  afterAll(async () => {
    await s?.close();
  });

  const post = (d: EnrolledDevice, system: unknown) => s.agent("POST", "/status", { ...heartbeatBody(), ...(system === undefined ? {} : { system }) }, d.auth);
  const get = async (name: string) => {
    const res = await s.api<DeviceView>("GET", `/devices/${name}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const token = async (username: "vera" | "otto") => {
    const res = await s.api<{ token: string }>("POST", "/auth/token", { username, password: PASSWORDS[username] });
    expect(res.status).toBe(201);
    return res.body.token;
  };

  it("a heartbeat's facts are kept; one carrying usage alone keeps them and moves the usage", async () => {
    const d = await enrollAs(s);
    expect((await get(d.name)).inventory).toEqual({ system: null, systemAt: null, usage: null, usageAt: null, history: [] });
    // The two heartbeats below must fall in one minute (one usage sample a minute).
    if (new Date().getSeconds() > 45) await new Promise((r) => setTimeout(r, (61 - new Date().getSeconds()) * 1000));

    expect((await post(d, { ...facts, usage: usage(12.5) })).status).toBe(200);
    const first = await get(d.name);
    expect(first.inventory.system).toEqual(facts);
    expect(first.inventory.usage).toEqual(usage(12.5));
    expect(first.inventory.history).toHaveLength(1);
    expect(first.inventory.history[0]).toMatchObject({ cpuPercent: 12.5, memoryPercent: 37.5, diskPercent: 31.3 });

    expect((await post(d, { usage: usage(80) })).status).toBe(200);
    const second = await get(d.name);
    expect(second.inventory.system).toEqual(facts);
    expect(second.inventory.systemAt).toBe(first.inventory.systemAt);
    expect(second.inventory.usage?.cpuPercent).toBe(80);
    // Same minute: still one sample.
    expect(second.inventory.history).toHaveLength(1);

    // A heartbeat without `system` (an older agent): facts kept, no usage now.
    expect((await post(d, undefined)).status).toBe(200);
    const third = await get(d.name);
    expect(third.inventory.system).toEqual(facts);
    expect(third.inventory.usage).toBeNull();

    // New facts replace the old ones whole.
    const moved = { ...facts, ips: ["10.9.9.9"], agent: { version: "1.2.4", startedAt: "2026-11-23T06:00:00.000Z" } };
    expect((await post(d, { ...moved, usage: usage(5) })).status).toBe(200);
    expect((await get(d.name)).inventory.system).toEqual(moved);
  });

  it("history: one sample a minute, the newest last, at most 120", async () => {
    const d = await enrollAs(s);
    const { id } = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { id: true } });
    const start = (Math.floor(Date.now() / 60_000) - 200) * 60_000;
    // Two hours of reports, two a minute: the heartbeat's own write of them (the agent API's
    // per-device rate limit would make this test wait minutes over HTTP).
    for (let minute = 0; minute < USAGE_SAMPLES + 4; minute++) {
      for (const second of [1, 31]) await recordInventory(s.ctx, id, { usage: usage(minute % 100) }, new Date(start + minute * 60_000 + second * 1000));
    }
    // And the last one through the API.
    const minute = USAGE_SAMPLES + 4;
    try {
      s.ctx.now = () => new Date(start + minute * 60_000 + 1000);
      expect((await post(d, { usage: usage(minute % 100) })).status).toBe(200);
      expect((await post(d, { usage: usage(99) })).status).toBe(200);
    } finally {
      s.ctx.now = realNow;
    }
    const { history } = (await get(d.name)).inventory;
    expect(history).toHaveLength(USAGE_SAMPLES);
    // The first five minutes fell out; each minute's first report is its sample.
    expect(history[0]!.cpuPercent).toBe(5);
    expect(history.at(-1)!.cpuPercent).toBe((USAGE_SAMPLES + 4) % 100);
    expect(new Date(history.at(-1)!.at).getTime()).toBe(Math.floor((start + (USAGE_SAMPLES + 4) * 60_000 + 1000) / 1000) * 1000);
    const times = history.map((h) => new Date(h.at).getTime());
    expect(times.every((t, i) => i === 0 || t - times[i - 1]! === 60_000)).toBe(true);
  });

  it("bad `system` input is 400 naming the field, and changes nothing", async () => {
    const d = await enrollAs(s);
    expect((await post(d, { ...facts, usage: usage(10) })).status).toBe(200);
    const before = await get(d.name);
    const lastSeen = (await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { lastSeen: true } })).lastSeen;
    for (const [system, field] of [
      [{ usage: { cpuPercent: 140 } }, "system.usage.cpuPercent"],
      [{ cpus: -1 }, "system.cpus"],
      [{ ips: "10.0.0.1" }, "system.ips"],
      [{ os: { version: "12" } }, "system.os.name"],
      [{ hostname: "x".repeat(300) }, "system.hostname"],
      ["linux", "system"],
    ] as const) {
      expectError(await post(d, system), 400, "INVALID_REQUEST", new RegExp(field.replace(/\./g, "\\.")));
    }
    const after = await get(d.name);
    expect(after.inventory).toEqual(before.inventory);
    expect((await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { lastSeen: true } })).lastSeen).toEqual(lastSeen);
  });

  it("PATCH /devices/{name}: alias and labels, validated as one; a viewer may not", async () => {
    const d = await enrollAs(s, { labels: { site: "a" } });
    const patch = (body: unknown, as?: string) => s.api<DeviceView>("PATCH", `/devices/${d.name}`, body, as);

    const both = await patch({ alias: "  Boiler room #2  ", labels: { site: "b", tier: "edge" } });
    expect(both.status).toBe(200);
    expect(both.body.alias).toBe("Boiler room #2");
    expect(both.body.labels).toEqual({ site: "b", tier: "edge" });

    // Alias alone leaves the labels; labels alone leave the alias.
    expect((await patch({ alias: "Boiler" })).body).toMatchObject({ alias: "Boiler", labels: { site: "b", tier: "edge" } });
    expect((await patch({ labels: {} })).body).toMatchObject({ alias: "Boiler", labels: {} });

    // Bad input: 400, and nothing changes (not even the valid half).
    for (const [body, message] of [
      [{ alias: "x".repeat(65) }, /alias: at most 64 characters/],
      [{ alias: "tab\there" }, /alias: no control characters/],
      [{ alias: 7 }, /alias/],
      [{ labels: { "bad key!": "v" }, alias: "fine" }, /labels: invalid label key/],
      [{ labels: { k: "bad value!" } }, /labels: invalid label value/],
      [{ nickname: "x" }, /nickname/],
      [{}, /nothing to change/],
    ] as const) {
      expectError(await patch(body), 400, "INVALID_REQUEST", message);
    }
    expect(await get(d.name)).toMatchObject({ alias: "Boiler", labels: {} });

    // Roles: a viewer is refused, an operator may.
    expectError(await patch({ alias: "Nope" }, await token("vera")), 403, "FORBIDDEN");
    expect((await get(d.name)).alias).toBe("Boiler");
    expect((await patch({ alias: "" }, await token("otto"))).body.alias).toBeNull();

    // Events say who changed what.
    const events = await s.api<{ items: { type: string; message: string; actor: string }[] }>("GET", `/events?kind=Device&name=${d.name}`);
    expect(events.status).toBe(200);
    const types = events.body.items.map((e) => e.type);
    expect(types).toContain("AliasChanged");
    expect(types).toContain("LabelsChanged");
    expectError(await s.api("PATCH", `/devices/${uniqueName("ghost")}`, { alias: "x" }), 404, "NOT_FOUND");
  });

  it("the list shows the alias, and the search finds a device by it", async () => {
    const d = await enrollAs(s);
    const alias = `Pump ${uniqueName("p")}`;
    expect((await s.api("PATCH", `/devices/${d.name}`, { alias })).status).toBe(200);
    const res = await s.api<{ items: { name: string; alias: string | null }[] }>("GET", `/devices?search=${encodeURIComponent(alias.slice(5))}`);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([expect.objectContaining({ name: d.name, alias })]);
  });
});

describe("the OpenAPI document", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
  });
  it("documents PATCH /devices/{name} and the inventory of GET /devices/{name}", async () => {
    const doc = await s.api<{ paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, { content?: Record<string, { schema: { properties: Record<string, unknown> } }> }> }>> }>(
      "GET",
      "/openapi.json",
    );
    expect(doc.status).toBe(200);
    const device = doc.body.paths["/devices/{name}"]!;
    expect(JSON.stringify(device.patch!.requestBody)).toContain("alias");
    const props = device.get!.responses["200"]!.content!["application/json"]!.schema.properties;
    expect(Object.keys(props)).toEqual(expect.arrayContaining(["alias", "inventory"]));
    expect(JSON.stringify(props.inventory)).toContain("history");
  });
});

describe("appendSample", () => {
  it("skips a second sample in the same minute and keeps the newest max", () => {
    const at = (m: number, s = 0): UsageSample => [m * 60 + s, m, null, null];
    let samples: UsageSample[] = [];
    samples = appendSample(samples, at(1, 5));
    samples = appendSample(samples, at(1, 40));
    expect(samples).toEqual([at(1, 5)]);
    for (let m = 2; m <= 6; m++) samples = appendSample(samples, at(m), 3);
    expect(samples.map((x) => x[1])).toEqual([4, 5, 6]);
  });
});
