/**
 * A template change reaches a whole fleet with a constant number of statements, whatever its
 * size: one UPDATE renders every member, and their held long-polls all answer with the new
 * spec. (How long 10,000 take is a benchmark's figure, not a test's.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { insertDevices, type BulkDevice } from "./helpers/fleets";
import { newEffects, renderDevices } from "../server/fleets/render";
import { rederiveStatuses } from "../server/fleets/sql";
import type { Tx } from "../server/db";
import { topics } from "../server/bus";
import { eventually } from "./helpers/devices";

const N = 300;
let s: TestServer;
let devices: BulkDevice[];

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
  devices = await insertDevices(s.ctx, "bulk", N, { group: "bulk" });
});
afterAll(async () => {
  await s?.close();
});

const body = (version: string) => ({
  metadata: { name: "bulk" },
  spec: { selector: { matchLabels: { group: "bulk" } }, template: { spec: { version, config: { files: [{ path: "/etc/bulk.conf", content: `v=${version}\n` }] } } } },
});

interface Work {
  spec?: { renderedVersion: number; templateVersion: string; version: string };
}

/** Counts the statements a transaction client is asked to run (raw SQL and model calls). */
function counting(tx: Tx): { tx: Tx; raw: () => number; model: () => number } {
  let raw = 0;
  let model = 0;
  const wrap = <T extends object>(target: T, onCall: () => void): T =>
    new Proxy(target, {
      get(t, p, r) {
        const v = Reflect.get(t, p, r) as unknown;
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          onCall();
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  const proxy = new Proxy(tx, {
    get(t, p, r) {
      const v = Reflect.get(t, p, r) as unknown;
      if (p === "$queryRawUnsafe" || p === "$executeRawUnsafe") {
        return (...args: unknown[]) => {
          raw++;
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      }
      if (typeof p === "string" && !p.startsWith("$") && v && typeof v === "object") return wrap(v, () => model++);
      return v;
    },
  });
  return { tx: proxy, raw: () => raw, model: () => model };
}

describe(`a fleet of ${N}`, () => {
  it("joins on creation and renders version 1 to every member", async () => {
    const created = await s.api<{ status: { devices: { total: number } } }>("POST", "/fleets", body("1.0.0"));
    expect(created.status).toBe(201);
    expect(created.body.status.devices.total).toBe(N);
    expect(await s.ctx.db.device.count({ where: { owner: "bulk", renderedVersion: 1, templateVersion: "1" } })).toBe(N);
  });

  it("a template change answers every held long-poll with renderedVersion 2", async () => {
    const polls = devices.map((d) =>
      fetch(`${s.url}/api/agent/v1/work?specVersion=1&wait=30`, { headers: d.auth }).then(async (r) => ({ status: r.status, body: (await r.json()) as Work })),
    );
    // Every poll parked (listening on its device's topic) before the change.
    await eventually(async () => (devices.every((d) => s.ctx.bus.listenerCount(topics.device(d.id)) > 0) ? true : undefined), 10_000);
    const put = await s.api<{ status: { templateVersion: string; devices: { outOfDate: number; unknown: number; total: number } } }>("PUT", "/fleets/bulk", body("2.0.0"));
    expect(put.status).toBe(200);
    expect(put.body.status.templateVersion).toBe("2");
    const answers = await Promise.all(polls);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.body.spec?.renderedVersion === 2 && a.body.spec.templateVersion === "2" && a.body.spec.version === "2.0.0")).toHaveLength(N);
    expect(await s.ctx.db.device.count({ where: { owner: "bulk", renderedVersion: 2 } })).toBe(N);
  });

  it("renders N devices with their statuses in a constant number of statements, each row written once", async () => {
    const fleet = await s.ctx.db.fleet.findUniqueOrThrow({ where: { name: "bulk" }, select: { id: true, name: true } });
    // Version 1 again (as a revert would): every member changes.
    const counted = await s.ctx.db.$transaction(async (tx) => {
      const c = counting(tx);
      const effects = newEffects(s.ctx.statusSettings);
      const ids = await renderDevices(c.tx, fleet, 1, new Date(), "test", effects);
      const rendering = { raw: c.raw(), model: c.model(), rendered: ids.length, touched: effects.touched.size };
      // Derived by the render: deriving them again changes nothing.
      const again = await rederiveStatuses(c.tx, ids, new Date(), s.ctx.statusSettings, "test");
      return { ...rendering, rederiveRaw: c.raw() - rendering.raw, again: again.length };
    });
    // The members' facts read (and locked), one UPDATE of spec and statuses per distinct new
    // status (here one: never-reporting devices stay Unknown), and the template version's id.
    expect(counted).toMatchObject({ raw: 2, model: 1, rendered: N, touched: 0, again: 0 });
    // Deriving again: the facts read, nothing written.
    expect(counted.rederiveRaw).toBe(1);
    expect(await s.ctx.db.device.count({ where: { owner: "bulk", renderedVersion: 3, templateVersion: "1" } })).toBe(N);
  });
});
