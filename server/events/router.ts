import { z } from "zod";
import { tracked } from "@trpc/server";
import { router, viewerProcedure } from "../trpc/init";
import { listEvents, OBJECT_KINDS, type EventRow } from "./events";
import { topics } from "../bus";

export const EventListInput = z.object({
  kind: z.enum(OBJECT_KINDS).optional(),
  name: z.string().max(128).optional(),
  since: z.coerce.date().optional(),
  beforeId: z.coerce.number().int().optional(),
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
        let last = input?.lastEventId ?? null;
        if (last !== null) {
          const missed = await listEvents(ctx.server, { afterId: last, limit: 1000 });
          for (const row of missed) {
            last = row.id;
            yield tracked(String(row.id), row);
          }
        }
        while (!signal?.aborted) {
          const row = queue.shift();
          if (row) {
            if (last !== null && row.id <= last) continue;
            last = row.id;
            yield tracked(String(row.id), row);
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal?.addEventListener("abort", () => resolve(), { once: true });
          });
          wake = null;
        }
      } finally {
        unsubscribe();
      }
    }),
});
