/** The client's error mapping against a stub HTTP server: every failure gets its exit code. */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api, ApiError, CliError } from "./http";

let server: http.Server;
let base: string;
let seen: { method?: string; url?: string; auth?: string; type?: string; key?: string | string[]; body: string } = { body: "" };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen = { method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers["content-type"], key: req.headers["idempotency-key"], body };
      const send = (status: number, text: string, type = "application/json") => res.writeHead(status, { "content-type": type }).end(text);
      if (req.url?.startsWith("/api/v1/ok")) return send(200, JSON.stringify({ fine: true }));
      if (req.url === "/api/v1/conflict") return send(409, JSON.stringify({ error: { code: "CONFLICT", message: "already decided" } }));
      if (req.url === "/api/v1/unauth") return send(401, JSON.stringify({ error: { code: "UNAUTHENTICATED", message: "unknown or expired token" } }));
      if (req.url === "/api/v1/proxy") return send(502, "<html><body>Bad gateway</body></html>", "text/html");
      if (req.url === "/api/v1/html") return send(200, "<html>hello</html>", "text/html");
      if (req.url === "/api/v1/slow") return void setTimeout(() => send(200, "{}"), 2_000);
      send(404, JSON.stringify({ error: { code: "NOT_FOUND", message: "nothing here" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(p: Promise<unknown>): Promise<CliError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe("Api", () => {
  it("sends the bearer token, JSON body and query (skipping empty values)", async () => {
    const api = new Api({ server: base + "/", token: "drvo_t" });
    expect(await api.post("/ok", { a: 1 })).toEqual({ fine: true });
    expect(seen).toMatchObject({ method: "POST", url: "/api/v1/ok", auth: "Bearer drvo_t", body: '{"a":1}' });
    await api.get("/ok", { labelSelector: "env in (dev,test)", limit: 5, cursor: undefined, state: "" });
    expect(seen.url).toBe("/api/v1/ok?labelSelector=env+in+%28dev%2Ctest%29&limit=5");
  });

  it("sends a fresh Idempotency-Key with every POST (issue 22), the one it is given on a retry, none with a GET", async () => {
    const api = new Api({ server: base, token: "drvo_t" });
    await api.post("/ok", { a: 1 });
    const first = seen.key;
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    await api.postText("/ok", "kind: Plan\n", "application/yaml");
    expect(seen.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.key).not.toBe(first);
    await api.request("POST", "/ok", { body: {}, idempotencyKey: "retry-of-the-first" });
    expect(seen.key).toBe("retry-of-the-first");
    await api.get("/ok");
    expect(seen.key).toBeUndefined();
  });

  it("postText sends the text as is with its media type, and the query", async () => {
    const api = new Api({ server: base, token: "drvo_t" });
    const text = "# a plan\nkind: Plan\nspec: {commands: []}\n";
    await api.postText("/ok", text, "application/yaml", { requireApproval: true, deadline: "30m", absent: undefined });
    expect(seen).toMatchObject({ method: "POST", url: "/api/v1/ok?requireApproval=true&deadline=30m", type: "application/yaml", body: text });
    await api.post("/ok", { a: 1 }, { dryRun: 1 });
    expect(seen).toMatchObject({ url: "/api/v1/ok?dryRun=1", type: "application/json", body: '{"a":1}' });
  });

  it("an error body becomes ApiError CODE: message, exit 1", async () => {
    const e = await failure(new Api({ server: base }).post("/conflict"));
    expect(e).toBeInstanceOf(ApiError);
    expect(e.message).toBe("CONFLICT: already decided");
    expect(e.exitCode).toBe(1);
  });

  it("401 is exit 3", async () => {
    const e = await failure(new Api({ server: base }).get("/unauth"));
    expect(e).toMatchObject({ status: 401, code: "UNAUTHENTICATED", exitCode: 3 });
  });

  it("a body not in the protocol's shape keeps the status", async () => {
    const e = await failure(new Api({ server: base }).get("/proxy"));
    expect(e).toMatchObject({ status: 502, code: "HTTP_502", exitCode: 1 });
    expect(e.message).toContain("Bad gateway");
    const html = await failure(new Api({ server: base }).get("/html"));
    expect(html.message).toMatch(/not JSON; is this a Drover server/);
  });

  it("unreachable or too slow is exit 4", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await failure(new Api({ server: `http://127.0.0.1:${port}` }).get("/ok"));
    expect(refused.exitCode).toBe(4);
    expect(refused.message).toBe(`cannot reach the server at http://127.0.0.1:${port}: ECONNREFUSED`);
    const slow = await failure(new Api({ server: base, timeoutMs: 200 }).get("/slow"));
    expect(slow.exitCode).toBe(4);
    expect(slow.message).toMatch(/timed out/);
  });

  it("an abort by the caller rejects with the signal's reason, not an exit code", async () => {
    const controller = new AbortController();
    const p = new Api({ server: base }).get("/slow", {}, controller.signal);
    controller.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
  });
});
