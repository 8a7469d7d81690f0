/**
 * The node:http transport over https: node:https is loaded on the first https request (for an
 * idle agent's memory), and that request still goes out and answers like any other; pinned to a
 * CA by fingerprint (issue 23), it trusts that CA alone and streams downloads.
 */
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeHttpTransport } from "./http-transport";
import { ServerTrust, sha256Of } from "./server-trust";

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

  it("keeps at most maxConnecting handshakes in progress; the next connects as one ends (the simulator after a restart)", async () => {
    // A server that accepts connections and never answers a ClientHello: every handshake stays in progress.
    const mute = net.createServer((socket) => accepted.push(socket));
    const accepted: net.Socket[] = [];
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", resolve));
    const muteUrl = `https://127.0.0.1:${(mute.address() as AddressInfo).port}/x`;
    const until = async (count: number) => {
      for (let i = 0; i < 200 && accepted.length < count; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      return accepted.length;
    };
    const bounded = createNodeHttpTransport({ maxConnecting: 2 });
    const unbounded = createNodeHttpTransport();
    try {
      const requests = Array.from({ length: 6 }, () => bounded.fetch(muteUrl).catch((error: Error) => error));
      expect(await until(2)).toBe(2);
      // Two handshakes end (the server resets them): two more start, and no others.
      for (const socket of accepted.splice(0)) socket.destroy();
      expect(await until(2)).toBe(2);
      for (const socket of accepted.splice(0)) socket.destroy();
      expect(await until(2)).toBe(2);
      for (const socket of accepted.splice(0)) socket.destroy();
      expect((await Promise.all(requests)).every((r) => r instanceof Error)).toBe(true);
      // Without a bound all six connect at once.
      const all = Array.from({ length: 6 }, () => unbounded.fetch(muteUrl).catch((error: Error) => error));
      expect(await until(6)).toBe(6);
      for (const socket of accepted.splice(0)) socket.destroy();
      await Promise.all(all);
    } finally {
      bounded.close();
      unbounded.close();
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => mute.close(resolve));
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

describe("createNodeHttpTransport pinned to its server's CA (issue 23)", () => {
  let server: https.Server;
  let url: string;
  const certPem = fs.readFileSync(path.join(tls, "cert.pem"), "utf8");
  // The self-signed certificate is its own CA: the pin is its SHA-256.
  const fingerprint = sha256Of(new X509Certificate(certPem).raw);
  let requests = 0;

  beforeAll(async () => {
    expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).not.toBe("0");
    server = https.createServer({ key: fs.readFileSync(path.join(tls, "key.pem")), cert: certPem }, (req, res) => {
      requests++;
      res.writeHead(200, { "content-type": "application/octet-stream" });
      // A body in several chunks, as a download arrives.
      res.write("first,");
      setTimeout(() => res.end("second"), 20);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("finds the pinned CA in the server's chain, then verifies against it alone; streamingFetch streams the body", async () => {
    const transport = createNodeHttpTransport({ trust: new ServerTrust({ caFingerprint: fingerprint }) });
    try {
      expect(await (await transport.fetch(`${url}/a`)).text()).toBe("first,second");
      const streamed = await transport.streamingFetch(`${url}/b`);
      const chunks: string[] = [];
      for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk).toString());
      expect(chunks.join("")).toBe("first,second");
    } finally {
      transport.close();
    }
  });

  it("refuses a server whose chain lacks the pinned CA, saying so, and one Node does not trust without a pin", async () => {
    const other = "ab".repeat(32);
    const before = requests;
    const pinned = createNodeHttpTransport({ trust: new ServerTrust({ caFingerprint: other }) });
    await expect(pinned.fetch(`${url}/a`)).rejects.toThrow(new RegExp(`^server certificate is not signed by the pinned CA \\(sha256 ${other}\\): 127\\.0\\.0\\.1:\\d+ presented localhost \\(sha256 ${fingerprint}\\)$`));
    pinned.close();
    expect(requests).toBe(before);
    const unpinned = createNodeHttpTransport();
    await expect(unpinned.fetch(`${url}/a`)).rejects.toMatchObject({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    unpinned.close();
  });
});
