/**
 * The node:http transport over https: node:https is loaded on the first https request (for an
 * idle agent's memory), and that request still goes out and answers like any other.
 */
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeHttpTransport } from "./http-transport";

const tls = path.join(import.meta.dirname, "test-support", "tls");

describe("createNodeHttpTransport over https", () => {
  let server: https.Server;
  let url: string;
  const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;

  beforeAll(async () => {
    // A self-signed certificate (test-support/tls, for 127.0.0.1): trusted for this test only.
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    server = https.createServer({ key: fs.readFileSync(path.join(tls, "key.pem")), cert: fs.readFileSync(path.join(tls, "cert.pem")) }, (req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        res.writeHead(201, { "content-type": "application/json", "x-seen": req.headers["x-token"] ?? "" });
        res.end(JSON.stringify({ method: req.method, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    await new Promise((resolve) => server.close(resolve));
  });

  it("sends the method, headers and body, and reads status, headers and JSON", async () => {
    const transport = createNodeHttpTransport();
    try {
      for (const n of [1, 2]) {
        const response = await transport.fetch(`${url}/x`, { method: "POST", headers: { "X-Token": `t${n}` }, body: `hello ${n}` });
        expect(response.status).toBe(201);
        expect(response.headers.get("x-seen")).toBe(`t${n}`);
        expect(await response.json()).toEqual({ method: "POST", body: `hello ${n}` });
      }
    } finally {
      transport.close();
    }
  });

  it("an aborted signal rejects without a request", async () => {
    const transport = createNodeHttpTransport();
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(transport.fetch(`${url}/x`, { signal: controller.signal })).rejects.toThrow("stop");
    transport.close();
  });
});
