/**
 * The console's API. The operator REST API (server/rest) calls these same procedures.
 */
import { router, viewerProcedure } from "./init";
import { authRouter } from "../auth/router";
import { devicesRouter } from "../devices/router";
import { enrollmentsRouter } from "../enrollments/router";
import { eventsRouter } from "../events/router";
import { actionsRouter } from "../actions/router";
import { nudgeRouter } from "../nudge";
import { fleetsRouter } from "../fleets/router";
import { plansRouter } from "../plans/router";
import { workflowsRouter } from "../workflows/router";
import { requestsRouter } from "../requests/router";
import { overviewRouter } from "../overview/router";
import { enrollmentTokensRouter } from "../enrollment-tokens/router";
import { minAgentVersion } from "../agent-dist/versions";

const systemRouter = router({
  settings: viewerProcedure.query(({ ctx }) => ({
    disconnectionTimeoutSeconds: ctx.server.statusSettings.disconnectionTimeoutSeconds,
    heartbeatSeconds: ctx.server.heartbeatSeconds,
    autoApprove: ctx.server.env.DROVER_AUTO_APPROVE?.text ?? null,
    restoredAt: ctx.server.statusSettings.restoredAt,
    approvalKinds: ctx.server.env.DROVER_APPROVAL_KINDS,
    /** DROVER_FOUR_EYES (issue 21): the console disables Approve on what you requested yourself. */
    fourEyes: ctx.server.env.DROVER_FOUR_EYES,
    actionConcurrency: ctx.server.env.DROVER_ACTION_CONCURRENCY.map((p) => ({ selector: p.text, max: p.max })),
    /** The oldest agent this server supports (issue 12): older devices are flagged. */
    minAgentVersion: minAgentVersion(ctx.server),
    /**
     * TLS (issue 23): the CA devices pin (shown on Add devices, in the install line), and whether
     * this server speaks plain HTTP beyond its own machine (a banner for admins).
     */
    tls: { on: ctx.server.tls.mode !== "off", caFingerprint: ctx.server.tls.caFingerprint, plainBeyondLoopback: ctx.server.tls.plainBeyondLoopback },
  })),
});

export const appRouter = router({
  auth: authRouter,
  devices: devicesRouter,
  enrollments: enrollmentsRouter,
  enrollmentTokens: enrollmentTokensRouter,
  events: eventsRouter,
  actions: actionsRouter,
  requests: requestsRouter,
  fleets: fleetsRouter,
  plans: plansRouter,
  workflows: workflowsRouter,
  system: systemRouter,
  overview: overviewRouter,
  ops: nudgeRouter,
});

export type AppRouter = typeof appRouter;
