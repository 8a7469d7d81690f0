import { z } from "zod";
import { router, viewerProcedure } from "../trpc/init";
import { HISTORY_RANGES } from "./buckets";
import { metricsHistory } from "./history";

export const HistoryInput = z.object({
  /** 1h (a point a minute), 24h (two minutes), 7d (14 minutes), with the default sample interval. */
  range: z.enum(HISTORY_RANGES).default("1h"),
});

export const overviewRouter = router({
  /** The fleet's metrics over time, aligned on buckets: devices per status, heartbeats and actions per minute, rollouts and plans. */
  history: viewerProcedure.input(HistoryInput).query(({ ctx, input }) => metricsHistory(ctx.server, input.range)),
});
