/**
 * The console's API. The operator REST API (server/rest) calls these same procedures.
 */
import { router, viewerProcedure } from "./init";
import { authRouter } from "../auth/router";
import { devicesRouter } from "../devices/router";
import { enrollmentsRouter } from "../enrollments/router";
import { eventsRouter } from "../events/router";

const systemRouter = router({
  settings: viewerProcedure.query(({ ctx }) => ({
    disconnectionTimeoutSeconds: ctx.server.statusSettings.disconnectionTimeoutSeconds,
    heartbeatSeconds: ctx.server.heartbeatSeconds,
    autoApprove: ctx.server.env.DROVER_AUTO_APPROVE?.text ?? null,
    restoredAt: ctx.server.statusSettings.restoredAt,
  })),
});

export const appRouter = router({
  auth: authRouter,
  devices: devicesRouter,
  enrollments: enrollmentsRouter,
  events: eventsRouter,
  system: systemRouter,
});

export type AppRouter = typeof appRouter;
