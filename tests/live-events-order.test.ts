/**
 * events.live with events arriving out of id order (issue 11): with several servers on one
 * PostgreSQL, or concurrent transactions on one, an event with a lower id can be published
 * after a higher one. The console's stream delivers both (it used to drop every id below the
 * last one it sent), and still skips what a reconnecting client had and what the replay sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { topics } from "../server/bus";
import { eventSelect, type EventRow } from "../server/events/events";

let s: TestServer;
let adminId: string;

beforeAll(async () => {
  s = await startTestServer();
  adminId = (await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } })).id;
});
afterAll(async () => {
  await s?.close();
});

async function subscribe(lastEventId?: number) {
  const controller = new AbortController();
  const caller = createCallerFactory(appRouter)(
    { server: s.ctx, auth: s.auth, principal: { userId: adminId, username: "admin", role: "viewer", via: "token" } },
    { signal: controller.signal },
  );
  const iterable = await caller.events.live(lastEventId === undefined ? undefined : { lastEventId });
  const iterator = (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  // The generator subscribes on its first step: take it now, and keep one step in flight.
  let pending = iterator.next();
  await new Promise((r) => setTimeout(r, 50));
  return {
    async next(timeoutMs = 2_000): Promise<EventRow | null> {
      const result = await Promise.race([pending, new Promise<null>((r) => setTimeout(() => r(null), timeoutMs))]);
      if (!result || result.done) return null;
      pending = iterator.next();
      return (result.value as [string, EventRow])[1];
    },
    stop: () => controller.abort(),
  };
}

const record = (reason: string) =>
  s.ctx.db.event.create({ data: { objectKind: "Device", objectName: "order", type: "Test", reason, actor: "test" }, select: eventSelect });

describe("events.live and out-of-order ids", () => {
  it("an event with a lower id published after a higher one is delivered too", async () => {
    const live = await subscribe();
    const lower = await record("committed first, published last");
    const higher = await record("published first");
    s.ctx.bus.publish(topics.events, higher);
    s.ctx.bus.publish(topics.events, lower);
    expect((await live.next())?.id).toBe(higher.id);
    expect((await live.next())?.id).toBe(lower.id);
    live.stop();
  });

  it("a reconnecting client gets the replay once and nothing it had", async () => {
    const had = await record("seen before the reconnect");
    const missed = await record("missed");
    const live = await subscribe(had.id);
    expect((await live.next())?.id).toBe(missed.id);
    // The same rows published again (a server's bus replay, a late publish) are not sent twice.
    s.ctx.bus.publish(topics.events, had);
    s.ctx.bus.publish(topics.events, missed);
    const fresh = await record("new");
    s.ctx.bus.publish(topics.events, fresh);
    expect((await live.next())?.id).toBe(fresh.id);
    live.stop();
  });
});
