import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { InvalidResponseError, parseRetryAfter, ProtocolClient as BaseClient, ProtocolError, TransportError, type ProtocolClientOptions } from "./client";
import { createNodeHttpTransport } from "./http-transport";

let server: http.Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

/** A server answering every request with `status`, `body` and `headers`; records the requests. */
async function answer(status: number, body: string, headers: Record<string, string> = {}) {
  const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  server = http.createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += String(chunk);
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: text });
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen };
}

const report = {
  resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" },
  config: { renderedVersion: 0 },
} as const;

const transport = createNodeHttpTransport();
afterAll(() => transport.close());

// The same contract over global fetch (the agent) and the node:http transport (the simulator).
describe.each([
  ["global fetch", undefined],
  ["the node:http transport", transport.fetch],
])("ProtocolClient over %s", (_name, fetchImpl) => {
  class ProtocolClient extends BaseClient {
    constructor(options: ProtocolClientOptions) {
      super({ ...options, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
    }
  }

  it("sends the bearer token and JSON body to the base path, and parses the answer", async () => {
    const { url, seen } = await answer(200, JSON.stringify({ heartbeatSeconds: 15 }));
    const client = new ProtocolClient({ serverUrl: url + "/" });
    expect(await client.postStatus("tok", report)).toEqual({ heartbeatSeconds: 15 });
    expect(seen[0]?.method).toBe("POST");
    expect(seen[0]?.url).toBe("/api/agent/v1/status");
    expect(seen[0]?.headers.authorization).toBe("Bearer tok");
    // Defaults of the shared schema are filled in before sending.
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ ...report, applications: [], conditions: {}, actions: [] });
  });

  it("PUTs an action report and reads the recorded action loosely", async () => {
    const recorded = { id: "a-1", state: "DONE", kind: "exec", origin: "user", output: "hi\n", extra: { any: "thing" } };
    const { url, seen } = await answer(200, JSON.stringify(recorded));
    const client = new ProtocolClient({ serverUrl: url });
    expect(await client.reportAction("tok", "a-1", { state: "DONE", output: "hi\n" })).toEqual(recorded);
    expect(seen[0]?.method).toBe("PUT");
    expect(seen[0]?.url).toBe("/api/agent/v1/actions/a-1");
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ state: "DONE", output: "hi\n" });
    await expect(client.reportAction("tok", "a-1", { state: "LOST" as "DONE" })).rejects.toThrow();
  });

  it("puts the secret in X-Enrollment-Secret and the wait in the query", async () => {
    const { url, seen } = await answer(200, JSON.stringify({ status: "Pending" }));
    await new ProtocolClient({ serverUrl: url }).getEnrollment("e 1", "secret", 30);
    expect(seen[0]?.url).toBe("/api/agent/v1/enrollments/e%201?wait=30");
    expect(seen[0]?.headers["x-enrollment-secret"]).toBe("secret");
  });

  it("refuses to send a body that breaks the contract", async () => {
    const { url, seen } = await answer(201, "{}");
    const client = new ProtocolClient({ serverUrl: url });
    await expect(
      client.createEnrollment({ deviceName: "Bad Name", platform: "linux-amd64", role: "worker", agentVersion: "1", secret: "short" }),
    ).rejects.toThrow();
    expect(seen).toHaveLength(0);
  });

  it("maps an error body to ProtocolError with status, code and Retry-After", async () => {
    const { url } = await answer(429, JSON.stringify({ error: { code: "RATE_LIMITED", message: "slow down" } }), { "retry-after": "7" });
    const error = await new ProtocolClient({ serverUrl: url }).getWork("tok", 0, 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ status: 429, code: "RATE_LIMITED", message: "slow down", retryAfterMs: 7_000 });
  });

  it("maps an error without a JSON body by its status", async () => {
    const { url } = await answer(401, "<html>nope</html>", { "content-type": "text/html" });
    const error = await new ProtocolClient({ serverUrl: url }).getWork("tok", 0, 0).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: "UNAUTHENTICATED" });
    const { url: url2 } = await (async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      return answer(502, "bad gateway");
    })();
    const error2 = await new ProtocolClient({ serverUrl: url2 }).getWork("tok", 0, 0).catch((e: unknown) => e);
    expect(error2).toMatchObject({ status: 502, code: "INTERNAL" });
  });

  it("reports a success answer that breaks the contract as InvalidResponseError", async () => {
    const { url } = await answer(200, JSON.stringify({ heartbeatSeconds: "soon" }));
    await expect(new ProtocolClient({ serverUrl: url }).postStatus("tok", report)).rejects.toThrow(InvalidResponseError);
  });

  it("reports a refused connection as TransportError", async () => {
    const { url } = await answer(200, "{}");
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = null;
    await expect(new ProtocolClient({ serverUrl: url }).getWork("tok", 0, 0)).rejects.toThrow(TransportError);
  });

  it("times out a request that gets no answer", async () => {
    server = http.createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = new ProtocolClient({ serverUrl: `http://127.0.0.1:${port}`, requestTimeoutMs: 100 });
    await expect(client.postStatus("tok", report)).rejects.toThrow(/no answer within 100 ms/);
  });

  it("rethrows the caller's abort as an AbortError, not a TransportError", async () => {
    server = http.createServer(() => undefined);
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await new ProtocolClient({ serverUrl: `http://127.0.0.1:${port}` }).getWork("tok", 0, 60, controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe("AbortError");
  });
});

describe("parseRetryAfter", () => {
  it.each([
    [null, undefined],
    ["", undefined],
    ["3", 3_000],
    ["0.5", 500],
    ["Wed, 21 Oct 2015 07:28:10 GMT", 10_000],
    ["Wed, 21 Oct 2015 07:27:00 GMT", 0],
    ["soon", undefined],
  ])("%s → %s", (value, expected) => {
    expect(parseRetryAfter(value, Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(expected);
  });
});
