/**
 * Issue 23, the server's side, against a real server on real TLS (a CA made by openssl for the
 * test, tests/helpers/tls.ts): requests over TLS with HSTS, plain HTTP on the TLS port
 * redirected (console) or refused (APIs), /ca.pem and install.sh carrying the CA, a held
 * long-poll past the header deadline, a renewal taken without a restart, and files that do not
 * make a pair refused at start.
 *
 * Runs once (the unit project, test servers on SQLite): all of it happens before any query or
 * does not depend on one.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollDevice, eventually } from "../../tests/helpers/devices";
import { startTestServer, type TestServer } from "../../tests/helpers/server";
import { httpsRequest, issueTestServerCertificate, makeTestCa, type TestCa } from "../../tests/helpers/tls";
import { startServer } from "../main";
import { HSTS } from "./front";
import { watchTlsFiles, type TlsMaterial } from "./certificates";
import type { Logger } from "../logger";

let dir: string;
let ca: TestCa;
let secure: TestServer;
let plain: TestServer;

const tlsEnv = (cert: { certFile: string; keyFile: string }, caFile: string) => ({ DROVER_TLS_CERT: cert.certFile, DROVER_TLS_KEY: cert.keyFile, DROVER_TLS_CA: caFile });

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-tls-"));
  ca = makeTestCa(dir, "ca-one");
  const cert = issueTestServerCertificate(ca, dir);
  [secure, plain] = await Promise.all([startTestServer(tlsEnv(cert, ca.caFile), { deadlines: { headersTimeoutMs: 1_000, requestTimeoutMs: 1_500 } }), startTestServer()]);
});

afterAll(async () => {
  await Promise.all([secure?.close(), plain?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One plain HTTP/1.1 request on a fresh socket; the raw answer. */
function plainRequest(port: number, requestPath: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(`GET ${requestPath} HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`));
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
  });
}

describe("a server on TLS", () => {
  it("serves over TLS, sends HSTS there, and only there", async () => {
    expect(secure.url).toMatch(/^https:\/\/localhost:\d+$/);
    const res = await httpsRequest(`${secure.url}/healthz`, { ca: ca.caPem });
    expect(res.status).toBe(200);
    expect(res.headers["strict-transport-security"]).toBe(HSTS);
    const clear = await fetch(`${plain.url}/healthz`);
    expect(clear.status).toBe(200);
    expect(clear.headers.get("strict-transport-security")).toBeNull();
    // The API helpers of the test server go over TLS too.
    expect((await secure.api("GET", "/devices")).status).toBe(200);
  });

  it("refuses a client that trusts another CA (the handshake fails, nothing is answered)", async () => {
    const other = makeTestCa(dir, "ca-other");
    await expect(httpsRequest(`${secure.url}/healthz`, { ca: other.caPem })).rejects.toMatchObject({ code: "SELF_SIGNED_CERT_IN_CHAIN" });
  });

  it("redirects plain HTTP for a console page to https, and refuses it for an API in the protocol's error shape", async () => {
    const port = secure.port;
    const page = await plainRequest(port, "/devices?x=1");
    expect(page.status).toBe(308);
    expect(page.headers).toMatch(new RegExp(`\\r\\nlocation: https://localhost:${port}/devices\\?x=1\\r\\n`, "i"));
    for (const p of ["/api/agent/v1/work", "/api/v1/devices", "/api/trpc/system.settings", "/install.sh", "/ca.pem", "/metrics"]) {
      const api = await plainRequest(port, p);
      expect(api.status, p).toBe(400);
      expect(JSON.parse(api.body), p).toEqual({ error: { code: "INVALID_REQUEST", message: `this port speaks HTTPS only: https://localhost:${port}${p}` } });
    }
  });

  it("serves its CA at /ca.pem, and install.sh pins it", async () => {
    const pem = await httpsRequest(`${secure.url}/ca.pem`, { ca: ca.caPem });
    expect(pem.status).toBe(200);
    expect(pem.headers["content-type"]).toBe("application/x-pem-file");
    expect(pem.text.trim()).toBe(ca.caPem.trim());
    expect(pem.headers["x-drover-ca-sha256"]).toBe(ca.fingerprint);
    expect(secure.ctx.tls).toMatchObject({ mode: "files", caFingerprint: ca.fingerprint, plainBeyondLoopback: false });

    const script = await httpsRequest(`${secure.url}/install.sh`, { ca: ca.caPem });
    expect(script.text).toContain(`SERVER="${secure.url}"`);
    expect(script.text).toContain(`CA_FINGERPRINT="${ca.fingerprint}"`);
    expect(script.text).toContain(ca.caPem.trim());

    // Plain HTTP: no CA to pin, and a script that pins none.
    const none = await fetch(`${plain.url}/ca.pem`);
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ error: { code: "NOT_FOUND", message: "no CA to pin: this server speaks plain HTTP (no TLS)" } });
    expect(await (await fetch(`${plain.url}/install.sh`)).text()).toContain('CA_FINGERPRINT=""');
  });

  it("holds a long-poll past the header deadline over TLS (the idle-socket guard counts TLS sockets)", async () => {
    const device = await enrollDevice(secure);
    const started = Date.now();
    const poll = await httpsRequest(`${secure.url}/api/agent/v1/work?wait=3`, { ca: ca.caPem, headers: device.auth });
    expect(poll.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThan(2_500);
  });

  it("closes a request whose headers never end, inside TLS, after the request deadline", async () => {
    const closed = await new Promise<number>((resolve, reject) => {
      const started = Date.now();
      const socket = tls.connect({ port: secure.port, host: "127.0.0.1", servername: "localhost", ca: ca.caPem }, () => socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n"));
      socket.on("close", () => resolve(Date.now() - started));
      socket.on("error", reject);
    });
    expect(closed).toBeGreaterThan(800);
    expect(closed).toBeLessThan(5_000);
  });

  it("a close ends the polls it holds over TLS at once, without waiting for them", async () => {
    const server = await startTestServer(tlsEnv(issueTestServerCertificate(ca, dir, "closing"), ca.caFile));
    const device = await enrollDevice(server);
    const poll = httpsRequest(`${server.url}/api/agent/v1/work?wait=30`, { ca: ca.caPem, headers: device.auth }).catch((error: unknown) => error);
    await eventually(async () => (((await server.ctx.metrics.heldPolls.get()).values[0]?.value ?? 0) > 0 ? true : undefined), 5_000);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    await poll;
  });

  it("closes a socket that never sends its first byte after the header deadline", async () => {
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(secure.port, "127.0.0.1");
      socket.on("close", () => resolve(Date.now() - started));
      socket.on("error", () => undefined);
    });
    expect(closed).toBeGreaterThan(800);
    expect(closed).toBeLessThan(5_000);
  });

  it("closes a handshake that stops midway at the handshake deadline, counted as a timeout; a client gone mid-handshake as a reset", async () => {
    const failures = async (reason: string) => (await secure.ctx.metrics.tlsHandshakeFailures.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
    const [timeouts, resets] = [await failures("timeout"), await failures("reset")];
    // The first bytes of a TLS record header (a handshake), then nothing.
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(secure.port, "127.0.0.1", () => socket.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x80])));
      socket.on("close", () => resolve(Date.now() - started));
      socket.on("error", () => undefined);
    });
    expect(closed).toBeGreaterThan(800);
    expect(closed).toBeLessThan(5_000);
    await eventually(async () => ((await failures("timeout")) === timeouts + 1 ? true : undefined), 2_000);
    await new Promise<void>((resolve) => {
      const socket = net.connect(secure.port, "127.0.0.1", () => socket.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x80]), () => setTimeout(() => (socket.destroy(), resolve()), 100)));
    });
    await eventually(async () => ((await failures("reset")) === resets + 1 ? true : undefined), 2_000);
  });
});

describe("certificate files", () => {
  it("the watcher takes a changed pair once it is whole: a certificate written without its key keeps the old one, and says so", async () => {
    const own = path.join(dir, "watch");
    fs.mkdirSync(own);
    const first = issueTestServerCertificate(ca, own, "first");
    const files = { cert: path.join(own, "live.pem"), key: path.join(own, "live.key") };
    fs.copyFileSync(first.certFile, files.cert);
    fs.copyFileSync(first.keyFile, files.key);
    const warnings: string[] = [];
    const taken: TlsMaterial[] = [];
    const log = { info: () => undefined, warn: (_: unknown, msg: string) => void warnings.push(msg) } as unknown as Logger;
    const watch = watchTlsFiles(files, (material) => taken.push(material), log, 20);
    try {
      const renewed = issueTestServerCertificate(ca, own, "renewed");
      fs.copyFileSync(renewed.certFile, files.cert);
      await eventually(async () => (warnings.length > 0 ? true : undefined), 5_000);
      expect(warnings[0]).toMatch(/do not make a valid pair yet; keeping the previous one/);
      expect(taken).toEqual([]);
      fs.copyFileSync(renewed.keyFile, files.key);
      await eventually(async () => (taken.length > 0 ? true : undefined), 5_000);
      expect(taken.at(-1)!.cert).toContain(fs.readFileSync(renewed.certFile, "utf8").trim());
    } finally {
      watch.stop();
    }
  });

  it("takes a renewed certificate (and CA) without a restart", async () => {
    const own = path.join(dir, "renewal");
    fs.mkdirSync(own);
    const first = issueTestServerCertificate(ca, own, "first");
    const files = { cert: path.join(own, "live.pem"), key: path.join(own, "live.key"), ca: path.join(own, "live-ca.pem") };
    fs.copyFileSync(first.certFile, files.cert);
    fs.copyFileSync(first.keyFile, files.key);
    fs.copyFileSync(ca.caFile, files.ca);
    const server = await startTestServer({ DROVER_TLS_CERT: files.cert, DROVER_TLS_KEY: files.key, DROVER_TLS_CA: files.ca });
    try {
      const peerIssuer = () =>
        new Promise<string>((resolve, reject) => {
          const socket = tls.connect({ host: "127.0.0.1", port: server.port, servername: "localhost", rejectUnauthorized: false }, () => {
            resolve(String(socket.getPeerCertificate().issuer.CN));
            socket.end();
          });
          socket.on("error", reject);
        });
      expect(await peerIssuer()).toBe("ca-one");

      const next = makeTestCa(own, "ca-two");
      const renewed = issueTestServerCertificate(next, own, "renewed");
      // (A certificate written before its key keeps the old pair: the watcher's test above.)
      fs.copyFileSync(renewed.certFile, files.cert);
      fs.copyFileSync(renewed.keyFile, files.key);
      fs.copyFileSync(next.caFile, files.ca);
      await eventually(async () => ((await peerIssuer()) === "ca-two" ? true : undefined), 10_000);
      const pem = await eventually(async () => {
        const res = await httpsRequest(`${server.url}/ca.pem`, { ca: next.caPem });
        return res.text.trim() === next.caPem.trim() ? res : undefined;
      }, 10_000);
      expect(pem.headers["x-drover-ca-sha256"]).toBe(next.fingerprint);
    } finally {
      await server.close();
    }
  }, 30_000);

  it("refuses to start on a key that is not the certificate's, a CA that did not sign it, or settings that do not go together", async () => {
    const a = issueTestServerCertificate(ca, dir, "pair-a");
    const b = issueTestServerCertificate(ca, dir, "pair-b");
    const other = makeTestCa(dir, "ca-unrelated");
    const start = (env: Record<string, string>) => startServer({ console: false, skipMigrate: true, env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: `file:${path.join(dir, "unused.db")}`, LOG_LEVEL: "silent", ...env } });
    await expect(start({ DROVER_TLS_CERT: a.certFile, DROVER_TLS_KEY: b.keyFile })).rejects.toThrow(/DROVER_TLS_KEY .*pair-b\.key: not the key of .*pair-a\.pem/);
    await expect(start({ DROVER_TLS_CERT: a.certFile, DROVER_TLS_KEY: a.keyFile, DROVER_TLS_CA: other.caFile })).rejects.toThrow(/DROVER_TLS_CA .*did not sign/);
    await expect(start({ DROVER_TLS_CERT: a.certFile })).rejects.toThrow(/DROVER_TLS_KEY: DROVER_TLS_CERT and DROVER_TLS_KEY go together/);
    await expect(start({ DROVER_TLS: "auto", DROVER_TLS_CERT: a.certFile, DROVER_TLS_KEY: a.keyFile })).rejects.toThrow(/DROVER_TLS: auto makes the server's own CA/);
    // Behind a TLS-terminating proxy (issue 23, item 4), DROVER_TLS_CA is the CA of the proxy's certificate: a CA's, or no start.
    const proxied = { DROVER_TLS: "proxy", DROVER_TRUSTED_PROXIES: "127.0.0.1" };
    await expect(start({ ...proxied, DROVER_TLS_CA: a.certFile })).rejects.toThrow(/DROVER_TLS_CA .*pair-a\.pem: not a CA certificate/);
    await expect(start({ ...proxied, DROVER_TLS_CA: path.join(dir, "missing.pem") })).rejects.toThrow(/DROVER_TLS_CA .*missing\.pem: ENOENT/);
  });
});
