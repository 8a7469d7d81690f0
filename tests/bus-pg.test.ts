/**
 * The bus across servers (issue 11, server/bus-pg.ts): two buses on one PostgreSQL database
 * stand for two servers. A publish on one reaches the other's subscribers (every one, in order;
 * how fast is the bench's wake figure, not this test's),
 * a server does not hear itself twice, payloads stay under PostgreSQL's 8,000 bytes (big ones
 * travel as references and are read back), and after its connection is killed a bus
 * reconnects, wakes its parked polls and delivers the events it missed. Runs with
 * DROVER_TEST_DATABASE=postgresql (npm run test:pg).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb, type Db } from "../server/db";
import { PgBus, pack, compact, expandEvents, BUS_CHANNEL, MAX_PAYLOAD_BYTES } from "../server/bus-pg";
import { topics } from "../server/bus";
import { eventSelect, type EventRow } from "../server/events/events";
import { logger } from "../server/logger";
import { newPgDatabase, testOnPostgres } from "./helpers/server";
import { eventually } from "../agent/test-support/agent-process";

const log = logger.child({}, { level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(testOnPostgres)("the PostgreSQL bus", () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Db;
  let a: PgBus;
  let b: PgBus;

  beforeAll(async () => {
    database = await newPgDatabase();
    db = await openDb(database.url);
    a = new PgBus({ url: database.url, db, log, serverId: "A" });
    b = new PgBus({ url: database.url, db, log, serverId: "B" });
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.$disconnect();
    await database?.drop();
  });

  it("a publish on one server wakes a subscriber on another, every message in order, and each server hears a message once", async () => {
    const latencies: number[] = [];
    const order: number[] = [];
    const heardOnA: unknown[] = [];
    const offB = b.subscribe<{ at: number; i: number }>(topics.device("d1"), (p) => {
      latencies.push(Date.now() - p.at);
      order.push(p.i);
    });
    const offA = a.subscribe(topics.device("d1"), (p) => heardOnA.push(p));
    for (let i = 0; i < 200; i++) {
      a.publish(topics.device("d1"), { at: Date.now(), i });
      await sleep(i % 10 === 0 ? 20 : 2);
    }
    await eventually(() => latencies.length === 200, 5_000, "200 wakes on B");
    offA();
    offB();
    latencies.sort((x, y) => x - y);
    // How fast is measured, not asserted, here (issue 20: latency targets live in the bench).
    console.info(`bus across servers: p99 ${latencies[Math.floor(latencies.length * 0.99) - 1]} ms over 200 wakes`);
    expect(order).toEqual([...Array(200).keys()]);
    // A's own subscriber got each once, in process; its own notifications were skipped.
    expect(heardOnA).toHaveLength(200);
  });

  it("event rows arrive whole (their time a Date); a row too big for a payload is read back by id", async () => {
    const got: EventRow[] = [];
    const off = b.subscribe<EventRow>(topics.events, (row) => got.push(row));
    const small = await db.event.create({ data: { objectKind: "Device", objectName: "d1", type: "T", reason: "r", message: "ünïcode", actor: "test" }, select: eventSelect });
    const big = await db.event.create({ data: { objectKind: "Device", objectName: "d1", type: "T", reason: "r", message: "x".repeat(20_000), actor: "test" }, select: eventSelect });
    a.publish(topics.events, small);
    a.publish(topics.events, big);
    await eventually(() => got.length === 2, 5_000, "both events on B");
    off();
    expect(got[0]).toEqual(small);
    expect(got[0]?.time).toBeInstanceOf(Date);
    expect(got[1]).toEqual(big);
  });

  it("a burst is packed into payloads under PostgreSQL's limit, in order", async () => {
    const messages = Array.from({ length: 5_000 }, (_, i) => [topics.device(`device-${i}`), { at: i }] as [string, unknown]);
    const payloads = pack("A ", messages);
    expect(payloads.length).toBeGreaterThan(10);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8_000);
    expect(payloads.flatMap((p) => JSON.parse(p.slice(2)) as unknown[])).toEqual(messages);
    expect(MAX_PAYLOAD_BYTES).toBeLessThan(8_000);

    const got: number[] = [];
    const offs = messages.map(([topic]) => b.subscribe<{ at: number }>(topic, (p) => got.push(p.at)));
    for (const [topic, payload] of messages) a.publish(topic, payload);
    await eventually(() => got.length === messages.length, 10_000, "5,000 wakes on B");
    for (const off of offs) off();
    expect(got).toEqual(messages.map((_, i) => i));
  });

  it("a fleet change's burst travels compacted: its wakes as id lists, its events as columns; every one arrives whole, in order", async () => {
    // As afterCommit publishes a change to 3,000 members: their wakes (one `at`), then two events each.
    const at = Date.now();
    const time = new Date(at - 5);
    const ids = Array.from({ length: 3_000 }, (_, i) => `member-${i}-${"x".repeat(i % 7)}`);
    // One statement (6,000 creates in one transaction outlasted its 5 s in a loaded CI).
    const created = await db.event.createManyAndReturn({
      data: ids.flatMap((id, i) => [
        { time, objectKind: "Device", objectName: id, type: "SpecRendered", reason: "7", message: `renderedVersion 7: fleet f template version 2`, actor: "alice" },
        { time, objectKind: "Device", objectName: id, type: "UpdatedStatusChanged", reason: "OutOfDate", message: `UpToDate → OutOfDate ${i % 3 ? "" : 'ünïcode " quote'}`, actor: "alice" },
      ]),
      select: eventSelect,
    });
    const rows: EventRow[] = created.sort((x, y) => x.id - y.id);
    const wire = (r: EventRow) => [r.id, r.time.getTime(), r.objectKind, r.objectName, r.type, r.reason, r.message, r.actor];
    const published = [...ids.map((id) => [topics.device(id), { at }]), ["fleet:f"], ...rows.map((r) => ["events", r])] as [string, unknown][];
    // As the bus queues them (event rows in their positional form).
    const messages = published.map(([topic, payload]) => (topic === "events" ? [topic, wire(payload as EventRow)] : payload === undefined ? [topic] : [topic, payload]));
    const packed = pack("A ", compact(messages as never));
    for (const p of packed) expect(Buffer.byteLength(p)).toBeLessThan(8_000);
    // Compacted, 4× smaller than as they came at least (≈ 7× with a fleet change's longer messages).
    expect(packed.length * 4).toBeLessThan(pack("A ", messages as never).length);
    const back = packed.flatMap((p) => JSON.parse(p.slice(2)) as [string, ...unknown[]][]);
    expect(back.filter((m) => m[0] === "@wake").flatMap((m) => m[2] as string[])).toEqual(ids);
    expect(back.filter((m) => m[0] === "@events").flatMap((m) => expandEvents(m as never))).toEqual(rows);

    // Over the bus: B's subscribers (on some devices only) get the wakes with their `at`, and every event row once, in order.
    const woken: string[] = [];
    const offs = ids.filter((_, i) => i % 2 === 0).map((id) => b.subscribe<{ at: number }>(topics.device(id), (p) => p.at === at && woken.push(id)));
    const heard: EventRow[] = [];
    const offEvents = b.subscribe<EventRow>("events", (e) => e.objectKind === "Device" && e.objectName.startsWith("member-") && heard.push(e));
    // And what went over the wire: A's payloads, as a third listener hears them.
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const onWire: string[] = [];
    listener.on("notification", (n) => n.payload?.startsWith("A ") && onWire.push(n.payload));
    await listener.query(`LISTEN ${BUS_CHANNEL}`);
    try {
      for (const [topic, payload] of published) a.publish(topic, payload);
      await eventually(() => heard.length === rows.length && woken.length === 1_500, 10_000, "the burst on B");
      expect(heard).toEqual(rows);
      expect(woken).toEqual(ids.filter((_, i) => i % 2 === 0));
      // The listener's connection is read apart from B's: wait for it to have heard the events too.
      await eventually(() => onWire.some((p) => p.includes('["@wake",')) && onWire.some((p) => p.includes('["@events",')), 10_000, "compact payloads on the channel");
      expect(onWire.length).toBeLessThanOrEqual(packed.length);
    } finally {
      for (const off of offs) off();
      offEvents();
      await listener.end();
    }
  });

  it("a killed connection is re-made; parked polls are woken and missed events delivered", async () => {
    const seen: EventRow[] = [];
    const wakes: unknown[] = [];
    const offEvents = b.subscribe<EventRow>(topics.events, (row) => seen.push(row));
    const offPoll = b.subscribe(topics.device("parked"), (p) => wakes.push(p ?? "re-check"));
    const first = await db.event.create({ data: { objectKind: "Device", objectName: "d2", type: "T", reason: "before", actor: "test" }, select: eventSelect });
    a.publish(topics.events, first);
    await eventually(() => seen.length === 1, 5_000, "the first event on B");

    const before = b.reconnectCount;
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const pids = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'drover-bus B' AND datname = current_database()");
      expect(pids.rows.length).toBe(1);
      for (const { pid } of pids.rows) await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    } finally {
      await admin.end();
    }
    // Published while B is away: B never hears this notification, and must not miss the event.
    const missed = await db.event.create({ data: { objectKind: "Device", objectName: "d2", type: "T", reason: "while away", actor: "test" }, select: eventSelect });
    a.publish(topics.events, missed);

    await eventually(() => b.reconnectCount > before && b.listening, 10_000, "B reconnected");
    await eventually(() => seen.some((e) => e.id === missed.id), 10_000, "the missed event on B");
    expect(wakes).toContain("re-check");
    await sleep(500);
    expect(seen.filter((e) => e.id === missed.id)).toHaveLength(1);
    offEvents();
    offPoll();
  });

  it("a burst past the queue's limit while connected: the rest are dropped and the others told at once to re-check everything", async () => {
    const c = new PgBus({ url: database.url, db, log, serverId: "C", maxQueued: 50 });
    await c.start();
    const heard: number[] = [];
    const rechecks: unknown[] = [];
    const offHeard = b.subscribe<{ i: number }>(topics.device("burst"), (p) => (p === undefined ? rechecks.push("re-check") : heard.push(p.i)));
    const offParked = b.subscribe(topics.device("parked-elsewhere"), (p) => rechecks.push(p ?? "parked re-check"));
    try {
      // In one turn of the event loop, before the first batch goes: 50 queue, 150 are dropped.
      for (let i = 0; i < 200; i++) c.publish(topics.device("burst"), { i });
      await eventually(() => rechecks.includes("parked re-check"), 5_000, "B told to re-check its parked polls");
      expect(heard).toEqual([...Array(50).keys()]);
    } finally {
      offHeard();
      offParked();
      await c.close();
    }
  });
});
