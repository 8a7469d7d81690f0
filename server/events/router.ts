import { z } from "zod";
import { tracked } from "@trpc/server";
import { router, viewerProcedure } from "../trpc/init";
import { listEvents, OBJECT_KINDS, type EventRow } from "./events";
import { topics } from "../bus";

const REPLAY_PAGE = 1000;

export const EventListInput = z.object({
  kind: z.enum(OBJECT_KINDS).optional(),
  name: z.string().max(128).optional(),
  since: z.coerce.date().optional(),
  beforeId: z.coerce.number().int().optional(),
  /** Events newer than this id, oldest first (for followers such as `drover events --follow`). */
  afterId: z.coerce.number().int().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const eventsRouter = router({
  list: viewerProcedure.input(EventListInput).query(({ ctx, input }) => listEvents(ctx.server, input)),
  /**
   * Every new event, live. On reconnect the client sends the last id it saw and first gets
   * what it missed, so a page recovers after a server restart without a reload.
   */
  live: viewerProcedure
    .input(z.object({ lastEventId: z.coerce.number().int().nullish() }).optional())
    .subscription(async function* ({ ctx, input, signal }) {
      const bus = ctx.server.bus;
      const queue: EventRow[] = [];
      let wake: (() => void) | null = null;
      const unsubscribe = bus.subscribe<EventRow>(topics.events, (row) => {
        queue.push(row);
        wake?.();
      });
      try {
        const seenBefore = input?.lastEventId ?? null;
        let last = seenBefore;
        // Events arrive out of id order (several servers, concurrent commits on PostgreSQL):
        // only what the client had and what the replay sent are skipped, not every lower id.
        const replayed = new Set<number>();
        if (last !== null) {
          // Page through the whole backlog: a client away for long may have missed more than a page.
          for (;;) {
            const missed = await listEvents(ctx.server, { afterId: last, limit: REPLAY_PAGE });
            for (const row of missed) {
              last = row.id;
              replayed.add(row.id);
              yield tracked(String(row.id), row);
            }
            if (missed.length < REPLAY_PAGE || signal?.aborted) break;
          }
        }
        while (!signal?.aborted) {
          const row = queue.shift();
          if (row) {
            if ((seenBefore !== null && row.id <= seenBefore) || replayed.has(row.id)) continue;
            yield tracked(String(row.id), row);
            continue;
          }
          // One abort listener per wait, removed when an event ends the wait: a subscription
          // open for hours must not collect one listener per event it delivered.
          await new Promise<void>((resolve) => {
            const onAbort = () => resolve();
            wake = () => {
              signal?.removeEventListener("abort", onAbort);
              resolve();
            };
            signal?.addEventListener("abort", onAbort, { once: true });
          });
          wake = null;
        }
      } finally {
        unsubscribe();
      }
    }),
});
