/**
 * The database going away under load (issue 22, items 6, 7 and 9): a private PostgreSQL
 * cluster (tests/helpers/private-pg.ts), stopped and started by the test while devices keep
 * sending heartbeats, with one server on it and then two.
 *
 * While it is stopped: every request that needs the database (operator REST, the agent API,
 * tRPC, sign-in) answers 503 with a Retry-After and the protocol's words, never PostgreSQL's;
 * `/readyz` is 503 and `/healthz` still 200. Once it is started: requests succeed again within
 * a few seconds, `/readyz` is 200, one server leads; no device that kept trying was marked
 * Offline, and a device that stayed silent gets a full disconnection timeout from the moment
 * the database came back before it is (and then it is).
 *
 * PostgreSQL only (the project `postgresql`): what is stopped is a PostgreSQL server. SQLite's
 * side of the classification is unit-tested (server/database-health.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueOperatorToken } from "../server/auth/auth";
import { startServer, type RunningServer } from "../server/main";
import { migrate } from "../server/migrate";
import { enrollDevice, eventually, heartbeatBody, uniqueName, type EnrolledDevice } from "./helpers/devices";
import { createDatabase, privatePgAvailable, startPrivateCluster, type PrivateCluster } from "./helpers/private-pg";
import { ADMIN_PASSWORD, testOnPostgres } from "./helpers/server";

/** Short enough to outlast in a test, long enough to be told from a sweep interval. */
const TIMEOUT_S = 3;
const ENV = {
  PORT: "0",
  HOST: "127.0.0.1",
  DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD,
  LOG_LEVEL: "silent",
  DROVER_SWEEP_SECONDS: "0.5",
  DROVER_DISCONNECTION_TIMEOUT_SECONDS: String(TIMEOUT_S),
};
/** Words of PostgreSQL, pg, Prisma or Node that must never reach a client. */
const LEAKS = /postgres|prisma|invocation|ECONN|terminat|administrator|57P0|P1001|P1017|connect|socket|127\.0\.0\.1/i;

interface Server {
  running: RunningServer;
  url: string;
  /** An operator token, issued before any outage. */
  operator: { authorization: string };
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>>;
  agent<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer<T>>;
}
interface Answer<T = unknown> {
  status: number;
  retryAfter: string | null;
  text: string;
  body: T;
}

async function call<T>(url: string, init: RequestInit = {}): Promise<Answer<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text, body: body as T };
}

async function startOn(databaseUrl: string): Promise<Server> {
  const running = await startServer({ console: false, skipMigrate: true, env: { ...ENV, DATABASE_URL: databaseUrl } });
  const admin = await running.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const { token } = await issueOperatorToken(running.ctx.db, admin.id, running.ctx.now());
  const json = (body: unknown): Record<string, string> => (body === undefined ? {} : { "content-type": "application/json" });
  return {
    running,
    url: running.url,
    operator: { authorization: `Bearer ${token}` },
    api: (method, p, body) =>
      call(`${running.url}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, ...json(body) }, body: body === undefined ? undefined : JSON.stringify(body) }),
    agent: (method, p, body, headers = {}) =>
      call(`${running.url}/api/agent/v1${p}`, { method, headers: { ...headers, ...json(body) }, body: body === undefined ? undefined : JSON.stringify(body) }),
  };
}

/**
 * Devices heartbeating every 300 ms, each to its server (round robin over `servers`), as agents
 * do through a balancer; `silence(d)` stops one for good. Every answer is kept.
 */
function heartbeats(servers: Server[], devices: EnrolledDevice[]) {
  const answers: { device: string; status: number; retryAfter: string | null; text: string }[] = [];
  const silent = new Set<string>();
  let turn = 0;
  const timer = setInterval(() => {
    for (const d of devices) {
      if (silent.has(d.name)) continue;
      const s = servers[turn++ % servers.length]!;
      void s.agent("POST", "/status", heartbeatBody(), d.auth).then(
        (a) => answers.push({ device: d.name, status: a.status, retryAfter: a.retryAfter, text: a.text }),
        (err: unknown) => answers.push({ device: d.name, status: 0, retryAfter: null, text: String(err) }),
      );
    }
  }, 300);
  return {
    answers,
    silence: (d: EnrolledDevice) => silent.add(d.name),
    stop: () => clearInterval(timer),
  };
}

/** A 503 in the protocol's shape (or tRPC's), with a Retry-After and none of the database's words. */
function expectUnavailable(a: Answer, what: string): void {
  expect(a.status, `${what}: ${a.text}`).toBe(503);
  expect(a.retryAfter, what).toMatch(/^[1-9]\d*$/);
  expect(a.text, what).not.toMatch(LEAKS);
}

async function summaryOf(s: Server, device: EnrolledDevice): Promise<string> {
  const row = await s.running.ctx.db.device.findUniqueOrThrow({ where: { name: device.name }, select: { summary: true } });
  return row.summary;
}

async function offlineEvents(s: Server, devices: EnrolledDevice[]): Promise<string[]> {
  const rows = await s.running.ctx.db.event.findMany({
    where: { objectKind: "Device", objectName: { in: devices.map((d) => d.name) }, type: "SummaryChanged", reason: "Offline" },
    select: { objectName: true },
  });
  return rows.map((r) => r.objectName);
}

const leaders = async (servers: Server[]) => {
  const flags = await Promise.all(servers.map(async (s) => /^drover_controller_leader (\d)$/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]));
  return flags.filter((f) => f === "1").length;
};

/**
 * The whole story on `servers` sharing one database: devices heartbeating, the database
 * stopped for longer than the disconnection timeout, then started.
 */
async function outage(cluster: PrivateCluster, servers: Server[]): Promise<void> {
  const [first] = servers as [Server];
  const devices: EnrolledDevice[] = [];
  for (let i = 0; i < 4; i++) devices.push(await enrollDevice(first, uniqueName("outage")));
  const [quiet, ...talking] = devices as [EnrolledDevice, ...EnrolledDevice[]];
  const pump = heartbeats(servers, devices);
  try {
    await eventually(async () => ((await Promise.all(devices.map((d) => summaryOf(first, d)))).every((s) => s === "Online") ? true : undefined), 10_000);
    await eventually(async () => ((await leaders(servers)) === 1 ? true : undefined), 10_000);

    // Stopped: `quiet` falls silent with it (as an agent backing off would), the rest keep trying.
    pump.silence(quiet);
    const sentBefore = pump.answers.length;
    await cluster.stop();
    const stoppedAt = Date.now();

    for (const s of servers) {
      await eventually(async () => ((await call(`${s.url}/readyz`)).status === 503 ? true : undefined), 3_000);
      expectUnavailable(await call(`${s.url}/readyz`), "/readyz");
      expect((await call(`${s.url}/healthz`)).status).toBe(200);
      expectUnavailable(await s.api("GET", "/devices"), "REST GET /devices");
      expectUnavailable(await s.api("POST", "/actions", { device: talking[0]!.name, kind: "noop" }), "REST POST /actions");
      expectUnavailable(await s.agent("POST", "/status", heartbeatBody(), talking[0]!.auth), "agent POST /status");
      expectUnavailable(await s.agent("GET", "/work?wait=0", undefined, talking[0]!.auth), "agent GET /work");
      expectUnavailable(await s.agent("GET", "/work?wait=5", undefined, talking[0]!.auth), "agent GET /work (long-poll)");
      const trpc = await call<{ error: { data: { code: string } } }>(`${s.url}/api/trpc/devices.list?input=%7B%7D`, { headers: s.operator });
      expectUnavailable(trpc, "tRPC devices.list");
      expect(trpc.body.error.data.code).toBe("SERVICE_UNAVAILABLE");
      const signIn = await call(`${s.url}/api/auth/sign-in/username`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: s.url },
        body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
      });
      expectUnavailable(signIn, "better-auth sign-in");
    }

    // Down for longer than the disconnection timeout, and a few sweeps' worth more.
    await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + TIMEOUT_S * 1000 + 1_500 - Date.now())));
    await cluster.start();
    const startedAt = Date.now();

    for (const s of servers) {
      await eventually(async () => ((await s.api("GET", "/devices")).status === 200 ? true : undefined), 5_000);
      await eventually(async () => ((await call(`${s.url}/readyz`)).status === 200 ? true : undefined), 5_000);
    }
    const recoveredMs = Date.now() - startedAt;
    expect(recoveredMs, "every server answering again").toBeLessThan(3_000);

    // Every refused heartbeat was a 503 with a Retry-After and no database text: none was a 500.
    const during = pump.answers.slice(sentBefore).filter((a) => a.status !== 200);
    expect(during.length, "heartbeats refused during the outage").toBeGreaterThan(0);
    for (const a of during) {
      expect(a.status, a.text).toBe(503);
      expect(a.retryAfter).toMatch(/^[1-9]\d*$/);
      expect(a.text).not.toMatch(LEAKS);
    }

    // A leader again (the outage cost the old one its lock): one full pass of its controllers,
    // the sweep first, run to its end here.
    await eventually(async () => ((await Promise.all(servers.map((s) => s.running.tick()))).filter(Boolean).length === 1 ? true : undefined), 10_000, 100);
    expect(await leaders(servers)).toBe(1);
    // The silent device last reached a server more than a timeout ago, but its timeout runs from
    // when the database came back (and the new leader's term): not Offline yet.
    expect(await summaryOf(first, quiet)).toBe("Online");
    await eventually(async () => ((await Promise.all(talking.map((d) => summaryOf(first, d)))).every((s) => s === "Online") ? true : undefined), 5_000);
    // ... and then it is, not before one full timeout after the database came back.
    await eventually(async () => ((await summaryOf(first, quiet)) === "Offline" ? true : undefined), (TIMEOUT_S + 8) * 1000, 100);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TIMEOUT_S * 1000);
    // The devices that kept trying were never marked Offline.
    expect(await offlineEvents(first, talking)).toEqual([]);
    expect(await offlineEvents(first, [quiet])).toEqual([quiet.name]);
  } finally {
    pump.stop();
  }
}

describe.runIf(testOnPostgres && privatePgAvailable)("the database stopped and started under load", () => {
  let cluster: PrivateCluster;
  let database: string;
  const servers: Server[] = [];

  beforeAll(async () => {
    cluster = await startPrivateCluster();
    database = await createDatabase(cluster, "drover");
    await migrate(database);
  });
  afterAll(async () => {
    for (const s of servers) await s.running.close().catch(() => undefined);
    cluster?.destroy();
  });

  const start = async () => {
    const s = await startOn(database);
    servers.push(s);
    return s;
  };

  it("one server: 503s while it is down, back within seconds, no device marked Offline for it", async () => {
    const s = await start();
    await outage(cluster, [s]);
    await s.running.close();
    servers.splice(servers.indexOf(s), 1);
  });

  it("two servers: both answer 503 and recover, one leads again, the grace holds on whichever does", async () => {
    const pair = [await start(), await start()];
    await outage(cluster, pair);
  });
});
