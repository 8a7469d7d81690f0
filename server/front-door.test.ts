/**
 * Issue 6 against a real server, each as an outsider would do it on the server's own port:
 * bodies and headers that never finish, bodies too big for any route, URLs that cannot be
 * parsed or decoded, held polls past their caps, wrong media types, `__proto__` keys, JSON
 * errors under every API prefix, and who may read /metrics.
 *
 * Runs once (the unit project, a test server on SQLite): sockets, deadlines, caps and
 * parsing happen before any query, so they cannot differ between the databases; what the
 * routes store is tested on both in tests/.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { enrollDevice, enrollmentBody, expectError, newSecret, uniqueName } from "../tests/helpers/devices";
import { restRoutes } from "./rest/routes";
import { MAX_CONNECTIONS, openFilesLimit } from "./front-door";

let s: TestServer;
/** Request deadlines of 1 s (headers) and 1.5 s (whole request). */
let quick: TestServer;

beforeAll(async () => {
  [s, quick] = await Promise.all([
    startTestServer({ DROVER_MAX_POLLS_PER_DEVICE: "2", DROVER_MAX_HELD_POLLS: "3", DROVER_METRICS_TOKEN: "metrics-token-0123456789" }),
    startTestServer({}, { deadlines: { headersTimeoutMs: 1_000, requestTimeoutMs: 1_500 } }),
  ]);
});
afterAll(async () => {
  await Promise.all([s?.close(), quick?.close()]);
});

interface RawAnswer {
  /** Everything the server sent before it closed (or before we gave up). */
  text: string;
  closed: boolean;
  ms: number;
}

/** Writes `data` on a fresh socket and collects what comes back until close or `giveUpMs`. */
function raw(url: string, data: string, giveUpMs = 5_000): Promise<RawAnswer> {
  const { port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(data));
    let text = "";
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => done(false), giveUpMs);
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("close", () => done(true));
    socket.on("error", () => done(true));
  });
}

const statusOf = (answer: RawAnswer) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer.text)?.[1] ?? 0);
const bodyOf = (answer: RawAnswer) => JSON.parse(answer.text.slice(answer.text.indexOf("\r\n\r\n") + 4)) as unknown;

describe("the connection cap follows the open-file limit (issue 22)", () => {
  it.each([
    ["Max open files            20000                20000                files     ", 20_000],
    ["Max open files            unlimited            unlimited            files     ", Number.MAX_SAFE_INTEGER],
    ["Max processes             96293                96293                processes ", null],
    [null, null],
  ])("%s → %s", (limits, expected) => {
    expect(openFilesLimit(limits)).toBe(expected);
  });

  it("leaves this process room for its files besides the sockets", () => {
    const limit = openFilesLimit();
    if (limit !== null && limit < 65_500) expect(MAX_CONNECTIONS).toBe(limit - 500);
    expect(MAX_CONNECTIONS).toBeGreaterThanOrEqual(100);
  });
});

describe("deadlines", () => {
  it("a body that never finishes is answered 408 and its socket closed", async () => {
    const answer = await raw(quick.url, "POST /api/v1/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", 8_000);
    expect(answer.closed).toBe(true);
    expect(answer.ms).toBeLessThan(4_000);
    expect(statusOf(answer)).toBe(408);
  });

  it("headers that never finish are cut too", async () => {
    const answer = await raw(quick.url, "GET /api/v1/me HTTP/1.1\r\nHost: x\r\n", 8_000);
    expect(answer.closed).toBe(true);
    expect(answer.ms).toBeLessThan(4_000);
  });

  it("a socket that never sends a byte is closed after the header deadline", async () => {
    const answer = await raw(quick.url, "", 8_000);
    expect(answer.closed).toBe(true);
    expect(answer.ms).toBeLessThan(4_000);
  });

  it("near the connection cap, new sockets shed the oldest idle ones, never a held poll", async () => {
    const tight = await startTestServer({}, { deadlines: { shedIdleAt: 6, shedNewAt: 6 } });
    const sockets: net.Socket[] = [];
    try {
      const device = await enrollDevice(tight);
      const controller = new AbortController();
      const held = fetch(`${tight.url}/api/agent/v1/work?wait=5`, { headers: device.auth, signal: controller.signal }).then(async (r) => ({ status: r.status, body: await r.json() }));
      await new Promise((r) => setTimeout(r, 300));
      const closed: number[] = [];
      for (let i = 0; i < 10; i++) {
        const socket = net.connect(Number(new URL(tight.url).port), "127.0.0.1");
        socket.on("close", () => closed.push(i));
        socket.on("error", () => undefined);
        sockets.push(socket);
        await new Promise((r) => socket.once("connect", r));
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 200));
      // The oldest idle sockets made room; the newest are still open.
      expect(closed.length).toBeGreaterThanOrEqual(4);
      expect(Math.max(...closed)).toBeLessThan(closed.length + 1);
      expect(sockets.at(-1)!.destroyed).toBe(false);
      // Operators still get in, and the held poll answers as it would have.
      expect((await tight.api("GET", "/devices")).status).toBe(200);
      expect(await held).toEqual({ status: 200, body: { actions: [] } });
    } finally {
      for (const socket of sockets) socket.destroy();
      await tight.close();
    }
  });

  it("past the idle threshold, a kept-alive socket is shed for a new one; a new one is never shed below the cap", async () => {
    const tight = await startTestServer({}, { deadlines: { shedIdleAt: 6 } });
    const port = Number(new URL(tight.url).port);
    const open = async (): Promise<net.Socket> => {
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      await new Promise((r) => socket.once("connect", r));
      return socket;
    };
    const kept: net.Socket[] = [];
    const fresh: net.Socket[] = [];
    try {
      // Three sockets kept alive after an answer each.
      for (let i = 0; i < 3; i++) {
        const socket = await open();
        const answered = new Promise((r) => socket.once("data", r));
        socket.write("GET /healthz HTTP/1.1\r\nHost: drover\r\n\r\n");
        await answered;
        kept.push(socket);
      }
      // New sockets that have not spoken yet (a burst's arrivals): each makes room, at the kept-alive ones' expense.
      while (kept.some((socket) => !socket.closed) && fresh.length < 10) {
        fresh.push(await open());
        await new Promise((r) => setTimeout(r, 30));
        // One arrival, one socket shed.
        expect(kept.filter((socket) => socket.closed).length).toBeLessThanOrEqual(fresh.length);
      }
      expect(kept.every((socket) => socket.closed)).toBe(true);
      // None idle left: new sockets are taken as they come (below the cap), none shed.
      for (let i = 0; i < 3; i++) fresh.push(await open());
      await new Promise((r) => setTimeout(r, 100));
      expect(fresh.filter((socket) => socket.closed)).toHaveLength(0);
    } finally {
      for (const socket of [...kept, ...fresh]) socket.destroy();
      await tight.close();
    }
  });

  it("a held long-poll outlives the request deadline: its request was received whole", async () => {
    const device = await enrollDevice(quick);
    const started = Date.now();
    const res = await fetch(`${quick.url}/api/agent/v1/work?wait=3`, { headers: device.auth });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ actions: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
  });
});

describe("held polls", () => {
  it("a device holds at most DROVER_MAX_POLLS_PER_DEVICE polls: a newer one answers the oldest at once", async () => {
    const device = await enrollDevice(s);
    const poll = () => fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: device.auth }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown, at: Date.now() }));
    const controller = new AbortController();
    const first = poll();
    await new Promise((r) => setTimeout(r, 200));
    const second = fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: device.auth, signal: controller.signal }).catch(() => null);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const third = fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: device.auth, signal: controller.signal }).catch(() => null);
    const answered = await first;
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ actions: [] });
    expect(answered.at - started).toBeLessThan(2_000);
    controller.abort();
    await Promise.all([second, third]);
  });

  it("past DROVER_MAX_HELD_POLLS a new poll gets 429 with Retry-After, and operators are still answered", async () => {
    const devices = await Promise.all([enrollDevice(s), enrollDevice(s), enrollDevice(s), enrollDevice(s)]);
    const controller = new AbortController();
    const held = devices.slice(0, 3).map((d) => fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: d.auth, signal: controller.signal }).catch(() => null));
    try {
      await expect.poll(async () => (await s.ctx.metrics.heldPolls.get()).values[0]?.value, { timeout: 5_000 }).toBe(3);
      const refused = await fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: devices[3]!.auth });
      expectError({ status: refused.status, body: await refused.json() }, 429, "RATE_LIMITED");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(5);
      // A poll with wait=0 holds nothing and is still served.
      expect((await fetch(`${s.url}/api/agent/v1/work?wait=0`, { headers: devices[3]!.auth })).status).toBe(200);
      expect((await s.api("GET", "/devices")).status).toBe(200);
    } finally {
      controller.abort();
      await Promise.all(held);
    }
  });
});

describe("body size: one limit for every route, refused before the body is read", () => {
  const headersOnly = (path: string) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 209715200\r\n\r\n`;

  for (const path of ["/api/trpc/auth.createToken", "/api/auth/sign-in/username", "/api/v1/auth/token", "/api/agent/v1/enrollments", "/anything"]) {
    it(`${path}: a declared 200 MB body is 413 at once`, async () => {
      const answer = await raw(s.url, headersOnly(path));
      expect(statusOf(answer)).toBe(413);
      expect(bodyOf(answer)).toMatchObject({ error: { code: "TOO_LARGE" } });
      expect(answer.closed).toBe(true);
      expect(answer.ms).toBeLessThan(2_000);
    });
  }

  it("a chunked tRPC body is counted as it arrives and refused past 1 MiB", async () => {
    const big = "x".repeat(2 * 1024 * 1024);
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"username":"${big}","password":"p"}`));
        controller.close();
      },
    });
    const res = await fetch(`${s.url}/api/trpc/auth.createToken`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it("a chunked body where no handler counts it (better-auth, pages) needs a Content-Length: 411", async () => {
    const answer = await raw(s.url, "POST /api/auth/sign-in/username HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n");
    expect(statusOf(answer)).toBe(411);
  });
});

describe("URLs", () => {
  const MALFORMED = "%E0%A4%A";

  it("a malformed %-escape in an agent path is 400 INVALID_REQUEST, before authentication", async () => {
    const put = await fetch(`${s.url}/api/agent/v1/actions/${MALFORMED}`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    expectError({ status: put.status, body: await put.json() }, 400, "INVALID_REQUEST", /%-escape/);
    const get = await fetch(`${s.url}/api/agent/v1/enrollments/${MALFORMED}`, { headers: { "x-enrollment-secret": "x" } });
    expectError({ status: get.status, body: await get.json() }, 400, "INVALID_REQUEST", /%-escape/);
  });

  const withParams = restRoutes.filter((r) => r.path.includes("{"));
  it.each(withParams.map((r) => [r.method, r.path] as const))("%s /api/v1%s with a malformed %%-escape is 400", async (method, path) => {
    const url = `${s.url}/api/v1${path.replace(/\{\w+\}/g, MALFORMED)}`;
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${s.adminToken}`, ...(method === "GET" ? {} : { "content-type": "application/json" }) },
      body: method === "GET" ? undefined : "{}",
    });
    expectError({ status: res.status, body: await res.json() }, 400, "INVALID_REQUEST");
  });

  it("a request line whose URL cannot be parsed gets 400 and its socket closed", async () => {
    const answer = await raw(s.url, "GET http://[::1/ HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    expect(answer.closed).toBe(true);
  });

  it.each(["/api/v1", "/api", "/api/nothing-here", "/api/agent/v1"])("GET %s answers a JSON 404", async (path) => {
    const res = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expectError({ status: res.status, body: await res.json() }, 404, "NOT_FOUND");
  });
});

describe("bodies", () => {
  it("text/plain on JSON routes is 415 on every API surface, and writes nothing", async () => {
    const name = uniqueName("plain");
    const plain = { "content-type": "text/plain" };
    const agent = await fetch(`${s.url}/api/agent/v1/enrollments`, { method: "POST", headers: plain, body: JSON.stringify(enrollmentBody(name, newSecret())) });
    expectError({ status: agent.status, body: await agent.json() }, 415, "UNSUPPORTED_MEDIA_TYPE");
    const rest = await fetch(`${s.url}/api/v1/auth/token`, { method: "POST", headers: plain, body: JSON.stringify({ username: "admin", password: "x" }) });
    expectError({ status: rest.status, body: await rest.json() }, 415, "UNSUPPORTED_MEDIA_TYPE");
    const trpc = await fetch(`${s.url}/api/trpc/auth.createToken`, { method: "POST", headers: { ...plain, authorization: `Bearer ${s.adminToken}` }, body: "{}" });
    expect(trpc.status).toBe(415);
    expect(await s.ctx.db.enrollmentRequest.count({ where: { deviceName: name } })).toBe(0);
  });

  it("labels with a __proto__ key are refused (400), not silently dropped", async () => {
    const name = uniqueName("proto");
    const text = `{"deviceName":"${name}","labels":{"__proto__":{"site":"x"},"env":"dev"},"platform":"linux-amd64","role":"worker","agentVersion":"1","secret":"${newSecret()}"}`;
    const res = await fetch(`${s.url}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body: text });
    expectError({ status: res.status, body: await res.json() }, 400, "INVALID_REQUEST", /__proto__/);
    const escaped = text.replace('"__proto__"', '"\\u005f_proto__"');
    const res2 = await fetch(`${s.url}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body: escaped });
    expectError({ status: res2.status, body: await res2.json() }, 400, "INVALID_REQUEST", /__proto__/);
    expect(await s.ctx.db.enrollmentRequest.count({ where: { deviceName: name } })).toBe(0);
  });

  it("tRPC input with a __proto__ key in action args is refused", async () => {
    const device = await enrollDevice(s);
    const res = await fetch(`${s.url}/api/trpc/actions.create`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.adminToken}` },
      body: `{"device":"${device.name}","kind":"noop","args":{"__proto__":{"x":1}}}`,
    });
    expect(res.status).toBe(400);
    expect(await s.ctx.db.action.count({ where: { device: { name: device.name } } })).toBe(0);
  });
});

describe("/metrics", () => {
  it("answers loopback by default, and anyone with the metrics token", async () => {
    expect((await fetch(`${s.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${s.url}/metrics`, { headers: { authorization: "Bearer metrics-token-0123456789" } })).status).toBe(200);
    const wrong = await fetch(`${s.url}/metrics`, { headers: { authorization: "Bearer not-the-token-000000" } });
    expectError({ status: wrong.status, body: await wrong.json() }, 403, "FORBIDDEN");
  });

  it("refuses an address outside DROVER_METRICS_ALLOW", async () => {
    const closed = await startTestServer({ DROVER_METRICS_ALLOW: "10.0.0.0/8" });
    try {
      const res = await fetch(`${closed.url}/metrics`);
      expectError({ status: res.status, body: await res.json() }, 403, "FORBIDDEN");
    } finally {
      await closed.close();
    }
  });
});
