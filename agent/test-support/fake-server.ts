/**
 * A small in-process server speaking the agent protocol, for the agent's own tests: it
 * follows the real server's rules (server/enrollments, server/devices) closely enough to
 * drive every branch of the agent, and it can inject failures (5xx, 429, dropped
 * connections). End-to-end behaviour against the real server is agent.process.test.ts.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes, randomUUID } from "node:crypto";
import { canMove, type ActionState } from "../../lib/action-status";
import {
  ActionReport,
  AGENT_API_BASE,
  EnrollmentRequestBody,
  StatusReport,
  WorkQuery,
  WaitQuery,
  type ErrorCode,
  type RenderedSpec,
  type WorkResponse,
} from "../../lib/protocol";

export interface FakeDevice {
  name: string;
  enrollmentId: string;
  secret: string;
  labels: Record<string, string>;
  /** The host facts sent with the (last) enrollment request. */
  system?: EnrollmentRequestBody["system"];
  status: "Pending" | "Approved" | "Denied";
  token?: string;
  tokenIssued: boolean;
  revoked: boolean;
  spec?: RenderedSpec;
  decommission: boolean;
  reports: StatusReport[];
  enrollPosts: number;
  /** Actions of this device, in creation order. */
  actions: FakeAction[];
}

/** An action as the real server keeps it (server/actions), with every report it received. */
export interface FakeAction {
  id: string;
  device: string;
  kind: string;
  args: Record<string, unknown>;
  createdAt: string;
  state: ActionState;
  origin: "user" | "agent";
  output?: string;
  error?: string;
  cancelRequested: boolean;
  /** Every report received (accepted or not), with the status it got. */
  reports: (ActionReport & { status: number })[];
}

export interface Failure {
  method?: string;
  /** Matched against the path below the API base, e.g. "/work". */
  path: RegExp;
  status: number;
  code?: ErrorCode;
  retryAfter?: string;
  /** Destroy the socket instead of answering. */
  drop?: boolean;
  times: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: string;
  status: number;
  at: number;
}

const STATUS_CODE: Record<number, ErrorCode> = {
  400: "INVALID_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  429: "RATE_LIMITED",
  500: "INTERNAL",
  503: "INTERNAL",
};

export class FakeServer {
  readonly devices = new Map<string, FakeDevice>();
  readonly requests: LoggedRequest[] = [];
  heartbeatSeconds = 1;
  autoApprove = false;
  /** Approved at once, the request's answer carries the token (as Drover's server does since issue 22); else only the decision does. */
  tokenWithApproval = false;
  /** Every (re-)request goes straight to Denied. */
  autoDeny = false;
  /** Caps `wait` of long-polls (tests keep them short). */
  maxWaitSeconds = 60;
  private failures: Failure[] = [];
  /** Parked long-polls, by device name. */
  private waiters = new Map<string, Set<() => void>>();
  private workHeld = 0;
  private byToken = new Map<string, FakeDevice>();

  private issueToken(device: FakeDevice): string {
    device.tokenIssued = true;
    device.token = `tok_${randomBytes(16).toString("hex")}`;
    this.byToken.set(device.token, device);
    return device.token;
  }

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeServer> {
    let fake: FakeServer | null = null;
    const server = http.createServer((req, res) => {
      void fake?.handle(req, res);
    });
    // As the real server: long-polls last up to 60 s, keep Node's timeouts above that.
    server.requestTimeout = 0;
    server.headersTimeout = 70_000;
    server.keepAliveTimeout = 75_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", 1024, resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeServer(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  async close(): Promise<void> {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  fail(failure: Omit<Failure, "times"> & { times?: number }): void {
    this.failures.push({ times: 1, ...failure });
  }

  clearFailures(): void {
    this.failures = [];
  }

  device(name: string): FakeDevice {
    const device = this.devices.get(name);
    if (!device) throw new Error(`no device ${name}`);
    return device;
  }

  approve(name: string): void {
    this.device(name).status = "Approved";
    this.notify(name);
  }

  deny(name: string): void {
    this.device(name).status = "Denied";
    this.notify(name);
  }

  setSpec(name: string, renderedVersion: number, overrides: Partial<Omit<RenderedSpec, "renderedVersion">> = {}): void {
    this.device(name).spec = {
      renderedVersion,
      templateVersion: `t${renderedVersion}`,
      version: `1.${renderedVersion}.0`,
      config: { files: [{ path: "/etc/answer", content: String(renderedVersion) }] },
      applications: [],
      hooks: {},
      ...overrides,
    };
    this.notify(name);
  }

  decommission(name: string): void {
    this.device(name).decommission = true;
    this.notify(name);
  }

  /** A new PENDING_SCHEDULE action for the device; offered on its polls until reported. */
  offerAction(name: string, kind = "noop", args: Record<string, unknown> = {}, createdAt = new Date().toISOString()): FakeAction {
    const action: FakeAction = { id: randomUUID(), device: name, kind, args, createdAt, state: "PENDING_SCHEDULE", origin: "user", cancelRequested: false, reports: [] };
    this.device(name).actions.push(action);
    this.notify(name);
    return action;
  }

  action(id: string): FakeAction {
    for (const device of this.devices.values()) {
      const action = device.actions.find((a) => a.id === id);
      if (action) return action;
    }
    throw new Error(`no action ${id}`);
  }

  /** As the operator API: PENDING_SCHEDULE is cancelled at once; NEW and RUNNING go to the agent in `cancel`. */
  cancelAction(id: string): void {
    const action = this.action(id);
    if (action.state === "PENDING_SCHEDULE" || action.state === "PENDING_APPROVE") action.state = "CANCELLED";
    else action.cancelRequested = true;
    this.notify(action.device);
  }

  /** The server loses the action (a restored backup, say): reports of it get 404. */
  forget(id: string): void {
    const action = this.action(id);
    const device = this.device(action.device);
    device.actions = device.actions.filter((a) => a !== action);
  }

  /** Moves an action behind the agent's back (e.g. back to PENDING_SCHEDULE). */
  setActionState(id: string, state: ActionState): void {
    this.action(id).state = state;
    this.notify(this.action(id).device);
  }

  revoke(name: string): void {
    this.device(name).revoked = true;
    this.notify(name);
  }

  /** Work long-polls held open right now, across devices. */
  get heldPolls(): number {
    return this.workHeld;
  }

  count(method: string, path: RegExp): number {
    return this.requests.filter((r) => r.method === method && path.test(r.path)).length;
  }

  private notify(name: string): void {
    for (const wake of [...(this.waiters.get(name) ?? [])]) wake();
  }

  /** Waits until `ready()` is true, a change is notified, or `seconds` pass. */
  private async hold(name: string, seconds: number, ready: () => boolean, res: http.ServerResponse): Promise<void> {
    const deadline = Date.now() + Math.min(seconds, this.maxWaitSeconds) * 1000;
    // (res, not req: an IncomingMessage emits "close" as soon as its body has been read.)
    let set = this.waiters.get(name);
    if (!set) this.waiters.set(name, (set = new Set()));
    const waiters = set;
    while (!ready() && Date.now() < deadline && !res.destroyed) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiters.delete(wake);
          res.off("close", wake);
          resolve();
        };
        const timer = setTimeout(wake, deadline - Date.now());
        waiters.add(wake);
        res.once("close", wake);
      });
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const path = url.pathname.startsWith(AGENT_API_BASE) ? url.pathname.slice(AGENT_API_BASE.length) : url.pathname;
    const method = req.method ?? "GET";
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method, path, query: url.search, status, at: Date.now() });
      if (res.destroyed) return;
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, message: string, headers: Record<string, string> = {}) =>
      send(status, { error: { code: STATUS_CODE[status] ?? "INTERNAL", message } }, headers);

    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");

    const failure = this.failures.find((f) => f.times > 0 && (f.method === undefined || f.method === method) && f.path.test(path));
    if (failure) {
      failure.times--;
      if (failure.drop) {
        this.requests.push({ method, path, query: url.search, status: 0, at: Date.now() });
        req.socket.destroy();
        return;
      }
      return send(
        failure.status,
        { error: { code: failure.code ?? STATUS_CODE[failure.status] ?? "INTERNAL", message: "injected failure" } },
        failure.retryAfter ? { "retry-after": failure.retryAfter } : {},
      );
    }

    const authed = (): FakeDevice | null => {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
      const device = token === undefined ? undefined : this.byToken.get(token);
      if (!device || device.revoked) {
        error(401, device ? "credential revoked" : "unknown token");
        return null;
      }
      return device;
    };

    if (method === "POST" && path === "/enrollments") {
      const parsed = EnrollmentRequestBody.safeParse(JSON.parse(text || "null"));
      if (!parsed.success) return error(400, parsed.error.message);
      const body = parsed.data;
      const existing = this.devices.get(body.deviceName);
      if (existing) {
        existing.enrollPosts++;
        if (existing.secret === body.secret) return send(201, { enrollmentId: existing.enrollmentId, status: existing.status });
        if (existing.status !== "Denied") return error(409, `device name "${body.deviceName}" is taken`);
        existing.secret = body.secret;
        existing.status = this.autoDeny ? "Denied" : "Pending";
        return send(201, { enrollmentId: existing.enrollmentId, status: existing.status });
      }
      const device: FakeDevice = {
        name: body.deviceName,
        enrollmentId: randomUUID(),
        secret: body.secret,
        labels: body.labels,
        ...(body.system ? { system: body.system } : {}),
        status: this.autoApprove ? "Approved" : this.autoDeny ? "Denied" : "Pending",
        tokenIssued: false,
        revoked: false,
        decommission: false,
        reports: [],
        enrollPosts: 1,
        actions: [],
      };
      this.devices.set(device.name, device);
      if (device.status === "Approved" && this.tokenWithApproval) return send(201, { enrollmentId: device.enrollmentId, status: device.status, token: this.issueToken(device) });
      return send(201, { enrollmentId: device.enrollmentId, status: device.status });
    }

    const enrollment = /^\/enrollments\/([^/]+)$/.exec(path);
    if (method === "GET" && enrollment) {
      const device = [...this.devices.values()].find((d) => d.enrollmentId === enrollment[1]);
      if (!device) return error(404, "enrollment not found");
      if (req.headers["x-enrollment-secret"] !== device.secret) return error(401, "wrong enrollment secret");
      const { wait } = WaitQuery.parse(Object.fromEntries(url.searchParams));
      await this.hold(device.name, wait, () => device.status !== "Pending", res);
      if (device.status === "Approved" && !device.tokenIssued) return send(200, { status: "Approved", token: this.issueToken(device) });
      return send(200, { status: device.status });
    }

    if (method === "GET" && path === "/work") {
      const device = authed();
      if (!device) return;
      const { wait, specVersion } = WorkQuery.parse(Object.fromEntries(url.searchParams));
      const work = (): WorkResponse | null => {
        if (device.revoked) return null;
        const answer: WorkResponse = { actions: [] };
        let any = false;
        if (device.spec && device.spec.renderedVersion > specVersion) {
          answer.spec = device.spec;
          any = true;
        }
        if (device.decommission) {
          answer.decommission = true;
          any = true;
        }
        const offered = device.actions
          .filter((a) => a.state === "PENDING_SCHEDULE")
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
          .map(({ id, kind, args, createdAt }) => ({ id, kind, args, createdAt }));
        if (offered.length > 0) {
          answer.actions = offered;
          any = true;
        }
        const cancel = device.actions.filter((a) => a.cancelRequested && (a.state === "NEW" || a.state === "RUNNING")).map((a) => a.id);
        if (cancel.length > 0) {
          answer.cancel = cancel;
          any = true;
        }
        return any ? answer : null;
      };
      this.workHeld++;
      try {
        await this.hold(device.name, wait, () => work() !== null || device.revoked, res);
      } finally {
        this.workHeld--;
      }
      if (device.revoked) return error(401, "credential revoked");
      return send(200, work() ?? { actions: [] });
    }

    if (method === "POST" && path === "/status") {
      const device = authed();
      if (!device) return;
      const parsed = StatusReport.safeParse(JSON.parse(text || "null"));
      if (!parsed.success) return error(400, parsed.error.message);
      device.reports.push(parsed.data);
      // The heartbeat lists the agent's whole queue: what is missing is LOST.
      const listed = new Set(parsed.data.actions.map((a) => a.id));
      for (const action of device.actions) {
        if ((action.state === "NEW" || action.state === "RUNNING") && !listed.has(action.id)) action.state = "LOST";
      }
      const state = parsed.data.decommissioning?.state;
      if (state === "Completed" || state === "Error") device.revoked = true;
      return send(200, { heartbeatSeconds: this.heartbeatSeconds });
    }

    const actionPath = /^\/actions\/([^/]+)$/.exec(path);
    if (method === "PUT" && actionPath) {
      const device = authed();
      if (!device) return;
      const parsed = ActionReport.safeParse(JSON.parse(text || "null"));
      if (!parsed.success) return error(400, parsed.error.message);
      const report = parsed.data;
      const id = actionPath[1] as string;
      let action = [...this.devices.values()].flatMap((d) => d.actions).find((a) => a.id === id);
      if (action && action.device !== device.name) return error(403, "another device's action");
      if (!action) {
        if (report.kind === undefined) return error(404, "action not found");
        // An agent's own action (or one the server forgot): the agent wins.
        action = { id, device: device.name, kind: report.kind, args: report.args ?? {}, createdAt: new Date().toISOString(), state: report.state, origin: "agent", cancelRequested: false, reports: [] };
        device.actions.push(action);
      } else if (action.state !== report.state) {
        if (!canMove(action.state, report.state, "agent")) {
          action.reports.push({ ...report, status: 409 });
          return error(409, `cannot move from ${action.state} to ${report.state}`);
        }
        action.state = report.state;
      }
      if (report.output !== undefined) action.output = report.output;
      if (report.error !== undefined) action.error = report.error;
      action.reports.push({ ...report, status: 200 });
      const { reports: _reports, cancelRequested: _cancel, ...recorded } = action;
      return send(200, recorded);
    }

    return error(404, `no route ${method} ${path}`);
  }
}

/** Polls `check` until it returns a value other than undefined/false. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
