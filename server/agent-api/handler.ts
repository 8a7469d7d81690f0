/**
 * The device-facing API (docs/agent-protocol.md) on plain node:http, not Next: a held
 * long-poll costs ≈10 MB per 1,000 here against ≈60 MB in a Next route handler (STACK.md).
 * A waiting poll is parked in memory and woken by a bus event for its device, never by
 * polling the database.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import {
  ActionReport,
  AGENT_API_BASE,
  CertificateRequestBody,
  type CertificateResponse,
  EnrollmentRequestBody,
  StatusReport,
  WaitQuery,
  WorkQuery,
  describeZodError,
  type WorkResponse,
} from "../../lib/protocol";
import type { ServerContext } from "../context";
import { AppError, invalid, notFound } from "../errors";
import { presentedCertificate, renewDeviceCertificate } from "../devices/certificates";
import { decodePathSegment, queryObject, RateLimiter, readJson, sendError, sendJson } from "../lib/http";
import { Arrivals, Deadlines, PollBudget, type Held, type Timed } from "./poll-budget";
import { awaitDecision, createEnrollment } from "../enrollments/enrollments";
import { authenticateDevice, authenticateDeviceIdentity } from "../devices/credentials";
import { ingestStatus } from "../devices/heartbeat";
import { ClientGone } from "../devices/sql-driver";
import { pendingWork } from "../devices/work";
import { topics } from "../bus";
import { agentOpenApi } from "./openapi";
import { reportAction } from "../actions/agent-reports";
import { CLIENT_ADDRESS_HEADER } from "../lib/client-address";
import { agentDistFor, manifestBody, sendArtifact, type AgentDist } from "../agent-dist/artifact";
import { AgentVersion } from "../../lib/agent-version";

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(describeZodError(r.error));
  return r.data;
}

/**
 * `?platform=linux-amd64`: that platform's single executable rather than the Node script;
 * `?version=1.2.3`: that build (one the server holds; agent upgrades) rather than the current one.
 */
const DownloadQuery = z.object({ platform: z.string().regex(/^[a-z0-9]+-[a-z0-9]+$/, "os-arch, e.g. linux-amd64").optional(), version: AgentVersion.optional() });

export interface WakePayload {
  /** When the change that makes work happened (ms since epoch), for the wake-latency metric. */
  at: number;
}

/** Requests of one kind inside the server at once, up to a limit. */
class InFlight {
  count = 0;
  constructor(private readonly limit: number) {}
  /** False, and nothing counted, at the limit. */
  enter(): boolean {
    if (this.count >= this.limit) return false;
    this.count++;
    return true;
  }
  leave(): void {
    this.count--;
  }
}

const HELD = Symbol("drover.heldPoll");
type HeldResponse = ServerResponse & { [HELD]?: { closed(): void } };

function onHeldClose(this: HeldResponse): void {
  this[HELD]?.closed();
}

export function createAgentApi(ctx: ServerContext) {
  // Per-device and per-name limits: generous for a well-behaved agent, a wall for a loop.
  const perDevice = new RateLimiter(10, 40);
  const perEnrollment = new RateLimiter(2, 10);
  // Downloads are the heaviest answers here (≈ 0.6 MB): a fleet installing at once is fine,
  // one address fetching in a loop is not.
  const perAddress = new RateLimiter(2, 30);
  const dist: AgentDist = agentDistFor(ctx.env.DROVER_AGENT_DIST);
  const polls = new PollBudget(ctx.env.DROVER_MAX_HELD_POLLS, ctx.env.DROVER_MAX_POLLS_PER_DEVICE, (reason) =>
    ctx.metrics.pollsRefused.inc({ reason }),
  );
  // The per-device cap across servers (issue 22): a device's first poll here in a while answers
  // its polls held by the other servers (an agent that reconnected through the load balancer to
  // another server leaves its ghost there); its next polls here tell no one (`Arrivals`). Its
  // own messages come back in process: skipped.
  const server = randomBytes(6).toString("hex");
  const arrivals = new Arrivals(5 * 60_000, 2 * ctx.env.DROVER_MAX_HELD_POLLS);
  ctx.bus.subscribe<{ key?: unknown; server?: unknown }>(topics.pollAdmitted, (m) => {
    if (m && m.server !== server && typeof m.key === "string") polls.supersedeAll(m.key);
  });

  /** Null: the poll is held; it answers and counts itself (`HeldPoll`). */
  async function work(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number | null> {
    const device = await authenticateDeviceIdentity(ctx, req);
    perDevice.take(device.id);
    const q = parse(WorkQuery, queryObject(url));
    if (q.wait === 0) {
      const ready = await pendingWork(ctx, device.id, q.specVersion);
      if (ready?.spec) ctx.metrics.specsSent.inc();
      sendJson(res, 200, ready ?? { actions: [] });
      return 200;
    }
    park(res, device.id, q.specVersion, q.wait);
    return null;
  }

  const deadlines = new Deadlines<HeldPoll>();

  /**
   * A held work poll (issue 22: memory per held poll). What a poll keeps while it waits is this
   * object, its wake listener, its place in the budget and the deadline queue, and the
   * response: no promise or async frame of the request (work() has returned), no timer, no
   * closure per step. Subscribes first, then checks: work that appears between the check and
   * the park still wakes the poll. A wake during a check re-checks once the check is done.
   */
  class HeldPoll implements Held, Timed {
    done = false;
    private checking = false;
    private counted = false;
    private again: WakePayload | undefined | null = null;
    readonly deadline: number;
    /** The bus listener (an arrow: the emitter calls it unbound). */
    readonly onWake = (wake?: WakePayload) => this.wake(wake);

    constructor(
      readonly key: string,
      private readonly deviceId: string,
      private readonly specVersion: number,
      private res: ServerResponse | null,
      waitSeconds: number,
    ) {
      this.deadline = Date.now() + waitSeconds * 1000;
    }

    // A newer poll of the same device took this one's place; or the wait is over.
    supersede(): void {
      this.finish({ actions: [] });
    }

    expire(): void {
      this.finish({ actions: [] });
    }

    /** The client went away. */
    closed(): void {
      if (this.settle()) this.count(499);
    }

    /** Ends the hold once (its place, wake and count given back); the response, or null when it had ended. */
    private settle(): ServerResponse | null {
      const res = this.res;
      if (this.done || !res) return null;
      this.done = true;
      // Answered polls stay in the deadline queue until their turn, without their response.
      this.res = null;
      polls.release(this.key, this);
      ctx.bus.unsubscribe(this.key, this.onWake);
      if (this.counted) ctx.metrics.heldPolls.dec();
      return res;
    }

    private count(status: number): void {
      ctx.metrics.agentRequests.inc({ route: "work", status: String(status) });
    }

    private finish(body: WorkResponse, wake?: WakePayload): void {
      const res = this.settle();
      if (!res) return;
      if (wake) ctx.metrics.wakeSeconds.observe((Date.now() - wake.at) / 1000);
      if (body.spec) ctx.metrics.specsSent.inc();
      sendJson(res, 200, body);
      this.count(200);
    }

    wake(wake?: WakePayload): void {
      if (this.done) return;
      if (this.checking) {
        this.again = wake;
        return;
      }
      this.checking = true;
      pendingWork(ctx, this.deviceId, this.specVersion).then(
        (ready) => {
          this.checking = false;
          if (ready) return this.finish(ready, wake);
          if (this.again !== null) {
            const w = this.again;
            this.again = null;
            this.wake(w);
          } else if (!this.counted && !this.done) {
            this.counted = true;
            ctx.metrics.heldPolls.inc();
          }
        },
        (err: unknown) => {
          this.checking = false;
          // Refused since it was parked (its credential revoked: issue 23): answered now, in the error shape.
          if (err instanceof AppError) {
            const res = this.settle();
            if (res) this.count(sendError(res, err, ctx.log));
            return;
          }
          if (!ctx.database.noteError(err)) return void ctx.log.error({ err, deviceId: this.deviceId }, "work check failed");
          // The database unreachable: 503 now (the agent comes back after Retry-After) rather than a poll held blind.
          const res = this.settle();
          if (res) this.count(sendError(res, err, ctx.log));
        },
      );
    }
  }

  function park(res: ServerResponse, deviceId: string, specVersion: number, waitSeconds: number): void {
    // One string for the budget's key and the bus topic.
    const key = topics.device(deviceId);
    const poll = new HeldPoll(key, deviceId, specVersion, res, waitSeconds);
    // A newer poll of the same device takes the oldest one's place: answered now, with no work.
    polls.admit(key, poll);
    if (arrivals.arrive(key, Date.now())) ctx.bus.publish(topics.pollAdmitted, { key, server });
    ctx.bus.subscribe<WakePayload>(key, poll.onWake);
    deadlines.add(poll, waitSeconds * 1000);
    // The response's close is the reliable "client went away" signal for a held request; one
    // listener function for every poll (`this` is the response).
    (res as HeldResponse)[HELD] = poll;
    res.on("close", onHeldClose);
    poll.wake();
  }

  /**
   * Enrollments in flight: past DROVER_MAX_ENROLLMENTS_IN_FLIGHT a request is refused before its
   * body is read. An enrollment is the agent API's dearest request (a transaction of several
   * rows, the fleets' selectors, events): 10,000 agents starting at once otherwise queue behind
   * each other past their own timeouts, retry, and fill the listen queue so that no one, an
   * operator included, gets in.
   */
  const enrollments = new InFlight(ctx.env.DROVER_MAX_ENROLLMENTS_IN_FLIGHT);
  ctx.metrics.watch("enrollmentsInFlight", () => enrollments.count);
  async function enroll(req: IncomingMessage, res: ServerResponse): Promise<number> {
    if (!enrollments.enter()) return refuse(req, res, "enrollments-in-flight", `the server has ${enrollments.count} enrollments in flight, its limit: retry later`);
    try {
      const body = parse(EnrollmentRequestBody, await readJson(req));
      perEnrollment.take(`name:${body.deviceName}`);
      // Set by server/main.ts before any handler (forwarded headers only from trusted proxies).
      const address = req.headers[CLIENT_ADDRESS_HEADER];
      const created = await createEnrollment(ctx, body, typeof address === "string" ? address : undefined);
      sendJson(res, 201, created);
      return 201;
    } finally {
      enrollments.leave();
    }
  }

  /** 429 before the body is read, Retry-After spread like the held polls' refusals: a wall of agents told the same second comes back as one wall. */
  function refuse(req: IncomingMessage, res: ServerResponse, reason: string, message: string): number {
    ctx.metrics.requestsRefused.inc({ reason });
    // The body is drained unread (handleAgentApi leaves the connection usable only for errors it catches).
    req.resume();
    return sendError(res, new AppError("RATE_LIMITED", message, 5 + Math.random() * 25), ctx.log);
  }

  async function enrollmentStatus(req: IncomingMessage, res: ServerResponse, url: URL, id: string): Promise<number> {
    const secret = req.headers["x-enrollment-secret"];
    if (typeof secret !== "string" || secret === "") throw new AppError("UNAUTHENTICATED", "missing X-Enrollment-Secret header");
    perEnrollment.take(`id:${id}`);
    const q = parse(WaitQuery, queryObject(url));
    const abort = new AbortController();
    const onClose = () => abort.abort();
    // A wait is a held request like a work poll: it counts against the same budget.
    const key = `enrollment:${id}`;
    const held = { supersede: onClose };
    if (q.wait > 0) polls.admit(key, held);
    res.on("close", onClose);
    try {
      const address = req.headers[CLIENT_ADDRESS_HEADER];
      const decision = await awaitDecision(ctx, id, secret, q.wait, abort.signal, typeof address === "string" ? address : undefined);
      sendJson(res, 200, decision);
      return 200;
    } finally {
      polls.release(key, held);
      res.off("close", onClose);
    }
  }

  /**
   * Heartbeats in flight (issue 22 item 4): past DROVER_MAX_HEARTBEATS_IN_FLIGHT a report is
   * refused before anything is read (its token, its body), so that a slow database costs the
   * agents time rather than the server memory. The agent waits Retry-After and sends its report
   * then; the sweep does not count the wait against the device (`noteHeartbeatShed`).
   */
  const heartbeats = new InFlight(ctx.env.DROVER_MAX_HEARTBEATS_IN_FLIGHT);
  ctx.metrics.watch("statusInFlight", () => heartbeats.count);
  async function status(req: IncomingMessage, res: ServerResponse): Promise<number> {
    if (!heartbeats.enter()) {
      ctx.database.noteHeartbeatShed();
      return refuse(req, res, "heartbeats-in-flight", `the server has ${heartbeats.count} status reports in flight, its limit: retry later`);
    }
    try {
      const device = await authenticateDevice(ctx, req);
      perDevice.take(device.id);
      const report = parse(StatusReport, await readJson(req));
      // The connection: destroyed once the agent gave up, and then its report is dropped unwritten.
      await ingestStatus(ctx, device, report, req.socket);
      sendJson(res, 200, { heartbeatSeconds: ctx.heartbeatSeconds });
      return 200;
    } catch (error) {
      // Counted as the held polls count a client that went away; there is no one to answer.
      if (error instanceof ClientGone) return 499;
      throw error;
    } finally {
      heartbeats.leave();
    }
  }

  /** Issue 23: a new client certificate for the device's key, asked for before the current one ends. */
  async function certificate(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const device = await authenticateDeviceIdentity(ctx, req);
    perDevice.take(device.id);
    const body = parse(CertificateRequestBody, await readJson(req));
    const issued = await renewDeviceCertificate(ctx, device, body.csr, presentedCertificate(ctx, req)?.fingerprint ?? null);
    sendJson(res, 200, { certificate: issued.certPem, notAfter: issued.notAfter.toISOString() } satisfies CertificateResponse);
    return 200;
  }

  async function actionReport(req: IncomingMessage, res: ServerResponse, id: string): Promise<number> {
    const device = await authenticateDeviceIdentity(ctx, req);
    perDevice.take(device.id);
    const report = parse(ActionReport, await readJson(req));
    sendJson(res, 200, await reportAction(ctx, device, id, report));
    return 200;
  }

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<{ name: string; status: number | null }> {
    const path = url.pathname.slice(AGENT_API_BASE.length).replace(/\/+$/, "");
    const method = req.method ?? "GET";
    if (path === "/work" && method === "GET") return { name: "work", status: await work(req, res, url) };
    if (path === "/status" && method === "POST") return { name: "status", status: await status(req, res) };
    if (path === "/certificate" && method === "POST") return { name: "certificate", status: await certificate(req, res) };
    if (path === "/enrollments" && method === "POST") return { name: "enroll", status: await enroll(req, res) };
    const m = /^\/enrollments\/([^/]+)$/.exec(path);
    if (m?.[1] && method === "GET") return { name: "enrollment", status: await enrollmentStatus(req, res, url, decodePathSegment(m[1], "enrollment id")) };
    const a = /^\/actions\/([^/]+)$/.exec(path);
    if (a?.[1] && method === "PUT") return { name: "action", status: await actionReport(req, res, decodePathSegment(a[1], "action id")) };
    if (path === "/download" && (method === "GET" || method === "HEAD")) {
      perAddress.take(String(req.headers[CLIENT_ADDRESS_HEADER]));
      const q = parse(DownloadQuery, queryObject(url));
      return { name: "download", status: sendArtifact(req, res, await (q.version ? dist.version(q.version, q.platform) : dist.current(q.platform))) };
    }
    if (path === "/download/manifest" && method === "GET") {
      perAddress.take(String(req.headers[CLIENT_ADDRESS_HEADER]));
      const q = parse(DownloadQuery, queryObject(url));
      sendJson(res, 200, manifestBody(await (q.version ? dist.version(q.version, q.platform) : dist.current(q.platform)), `${AGENT_API_BASE}/download`));
      return { name: "download-manifest", status: 200 };
    }
    if (path === "/openapi.json" && method === "GET") {
      sendJson(res, 200, agentOpenApi());
      return { name: "openapi", status: 200 };
    }
    throw notFound(`${method} ${url.pathname}`);
  }

  return async function handleAgentApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    let name = "unknown";
    let code: number | null;
    try {
      const r = await route(req, res, url);
      name = r.name;
      code = r.status;
    } catch (error) {
      // The database unreachable: 503 with Retry-After (errors.ts), and this heartbeat was
      // refused for the server's sake, not missed by the device (the sweep's grace).
      ctx.database.noteError(error);
      code = sendError(res, error, ctx.log);
      // Leave the connection usable: drain what the client still sends.
      req.resume();
    }
    // A held poll counts itself when it answers.
    if (code !== null) ctx.metrics.agentRequests.inc({ route: name, status: String(code) });
  };
}
