/**
 * events.live: the console's live stream of new events, through a tRPC caller on a real
 * server. Values are tRPC `tracked()` envelopes: `[id, event, marker]`, id = String(event.id).
 */
import { getEventListeners } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollmentBody, heartbeat, enrollDevice, newSecret, uniqueName } from "./helpers/devices";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { topics } from "../server/bus";
import type { EventRow } from "../server/events/events";

let s: TestServer;
let adminId: string;

beforeAll(async () => {
  s = await startTestServer();
  adminId = (await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } })).id;
});
afterAll(async () => {
  await s?.close();
});

interface Live {
  iterator: AsyncIterator<unknown>;
  signal: AbortSignal;
  stop(): void;
}

/** A subscription the way the console's client opens one, with its own abort signal. */
async function subscribe(lastEventId?: number | null, role: "viewer" | null = "viewer"): Promise<Live> {
  const controller = new AbortController();
  const caller = createCallerFactory(appRouter)(
    { server: s.ctx, auth: s.auth, principal: role ? { userId: adminId, username: "admin", role, via: "token" } : null },
    { signal: controller.signal },
  );
  const iterable = await caller.events.live(lastEventId === undefined ? undefined : { lastEventId });
  return { iterator: (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator](), signal: controller.signal, stop: () => controller.abort() };
}

/** Unwraps one tracked value, checking its envelope. */
function unwrap(value: unknown): EventRow {
  expect(Array.isArray(value)).toBe(true);
  const [id, row] = value as [string, EventRow];
  expect(row).toMatchObject({ id: expect.any(Number), objectKind: expect.any(String), objectName: expect.any(String), type: expect.any(String) });
  expect(id).toBe(String(row.id));
  return row;
}

async function next(live: Live, timeoutMs = 2_000): Promise<EventRow> {
  const result = await Promise.race([
    live.iterator.next(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs)),
  ]);
  expect(result.done).toBe(false);
  return unwrap(result.value);
}

async function take(live: Live, n: number): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  for (let i = 0; i < n; i++) rows.push(await next(live));
  return rows;
}

async function lastEventId(): Promise<number> {
  return (await s.ctx.db.event.aggregate({ _max: { id: true } }))._max.id ?? 0;
}

function enroll(name: string) {
  return s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, newSecret()));
}

describe("events.live", () => {
  it("yields new events as tracked values, in order, as they are recorded", async () => {
    const live = await subscribe();
    try {
      const pending = next(live);
      const name = uniqueName("live");
      const created = await enroll(name);
      const first = await pending;
      expect(first).toMatchObject({ objectKind: "EnrollmentRequest", objectName: name, type: "EnrollmentRequested", actor: `device:${name}` });

      expect((await s.api("POST", `/enrollments/${created.body.enrollmentId}/approve`, {})).status).toBe(200);
      const more = await take(live, 2);
      expect(more.map((e) => [e.objectKind, e.type])).toEqual([
        ["EnrollmentRequest", "EnrollmentApproved"],
        ["Device", "DeviceEnrolled"],
      ]);
      const ids = [first, ...more].map((e) => e.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(3);
      // The same rows the event log has.
      const stored = await s.ctx.db.event.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
      expect(stored.map((e) => e.type)).toEqual([first, ...more].map((e) => e.type));
    } finally {
      live.stop();
    }
  });

  it("with lastEventId, first replays what was missed, then goes on live, without duplicates", async () => {
    const seenUpTo = await lastEventId();
    // Events recorded while nobody listens.
    const missedNames = [uniqueName("missed"), uniqueName("missed")];
    for (const name of missedNames) expect((await enroll(name)).status).toBe(201);
    const missed = await s.ctx.db.event.findMany({ where: { id: { gt: seenUpTo } }, orderBy: { id: "asc" } });
    expect(missed).toHaveLength(2);

    const live = await subscribe(seenUpTo);
    try {
      const replayed = await take(live, missed.length);
      expect(replayed.map((e) => e.id)).toEqual(missed.map((e) => e.id));
      expect(replayed.map((e) => e.objectName)).toEqual(missedNames);

      const laterName = uniqueName("later");
      await enroll(laterName);
      const later = await next(live);
      expect(later).toMatchObject({ objectName: laterName, type: "EnrollmentRequested" });
      expect(later.id).toBeGreaterThan(missed.at(-1)?.id ?? 0);
    } finally {
      live.stop();
    }
  });

  it("replays a backlog larger than one page completely, in order", async () => {
    const seenUpTo = await lastEventId();
    const backlog = 1_250;
    await s.ctx.db.event.createMany({
      data: Array.from({ length: backlog }, (_, i) => ({ objectKind: "Server", objectName: "backlog", type: "Test", reason: String(i), actor: "test" })),
    });
    const live = await subscribe(seenUpTo);
    try {
      const replayed = await take(live, backlog);
      expect(replayed.map((e) => Number(e.reason))).toEqual(Array.from({ length: backlog }, (_, i) => i));
      const laterName = uniqueName("after-backlog");
      await enroll(laterName);
      expect(await next(live)).toMatchObject({ objectName: laterName });
    } finally {
      live.stop();
    }
  });

  it("lastEventId of the newest event replays nothing", async () => {
    const live = await subscribe(await lastEventId());
    try {
      const pending = next(live);
      const name = uniqueName("fresh");
      await enroll(name);
      expect(await pending).toMatchObject({ objectName: name });
    } finally {
      live.stop();
    }
  });

  it("stops when the client goes away and leaves no listener behind", async () => {
    const before = s.ctx.bus.listenerCount(topics.events);
    const live = await subscribe();
    const pending = next(live);
    await enroll(uniqueName("bye"));
    await pending;
    expect(s.ctx.bus.listenerCount(topics.events)).toBe(before + 1);
    live.stop();
    const end = await Promise.race([live.iterator.next(), new Promise((r) => setTimeout(() => r("still open"), 2_000))]);
    expect(end).toEqual({ done: true, value: undefined });
    expect(s.ctx.bus.listenerCount(topics.events)).toBe(before);
  });

  it("a long-lived subscription does not pile up abort listeners while it waits", async () => {
    const d = await enrollDevice(s);
    expect((await heartbeat(s, d)).status).toBe(200);
    const live = await subscribe();
    try {
      // Twenty quiet spells, each ended by one event (a summary change).
      for (let i = 0; i < 20; i++) {
        const pending = next(live);
        expect((await heartbeat(s, d, { resources: { cpu: i % 2 === 0 ? "Degraded" : "Healthy" } })).status).toBe(200);
        expect(await pending).toMatchObject({ objectName: d.name, type: "SummaryChanged", reason: i % 2 === 0 ? "Degraded" : "Online" });
      }
      expect(getEventListeners(live.signal, "abort").length).toBeLessThanOrEqual(2);
    } finally {
      live.stop();
    }
  });

  it("needs a signed-in caller", async () => {
    const err = await subscribe(undefined, null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).code).toBe("UNAUTHORIZED");
  });
});
