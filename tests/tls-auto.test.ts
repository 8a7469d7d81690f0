/**
 * Issue 23, DROVER_TLS=auto, on both databases: the server makes its own CA on first start and
 * keeps it in the database, serves real TLS for this machine's names with it, and every server
 * of the database (a cluster, a restart) presents certificates of that one CA. A real agent pinned
 * to it enrolls; one pinned to another CA is refused.
 * The certificates are the server's own (server/tls/signer.ts, @peculiar/x509).
 */
import os from "node:os";
import fs from "node:fs";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess, eventually, HEALTHY_HOST } from "../agent/test-support/agent-process";
import { loadOrCreateCa } from "../server/tls/auto-ca";
import { HSTS } from "../server/tls/front";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { x509Signer } from "../server/tls/signer";
import { httpsRequest, makeTestCa } from "./helpers/tls";

let first: TestServer;

beforeAll(async () => {
  first = await startTestServer({ DROVER_TLS: "auto", DROVER_HEARTBEAT_SECONDS: "2" });
});

afterAll(async () => {
  AgentProcess.killAll();
  await first?.close();
});

/** The certificate the server presents, and its chain's fingerprints. */
function presented(port: number) {
  return new Promise<tls.DetailedPeerCertificate>((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate(true));
      socket.end();
    });
    socket.on("error", reject);
  });
}

/** A TLS connection offering `session`: whether the server resumed it, and the session it issued. */
function handshake(port: number, ca: string, session?: Buffer) {
  return new Promise<{ reused: boolean; session: Buffer | undefined }>((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: "localhost", ca, ...(session ? { session } : {}) });
    let issued: Buffer | undefined;
    let reused = false;
    socket.on("session", (s: Buffer) => (issued = s));
    socket.once("secureConnect", () => {
      reused = socket.isSessionReused();
      socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    socket.on("data", () => {});
    socket.on("error", reject);
    socket.on("close", () => resolve({ reused, session: issued }));
  });
}

describe("DROVER_TLS=auto", () => {
  it("makes a CA on first start, keeps it in the database, and serves TLS for this machine's names with it", async () => {
    const { tls: status } = first.ctx;
    expect(status).toMatchObject({ mode: "auto", plainBeyondLoopback: false });
    expect(status.caFingerprint).toMatch(/^[0-9a-f]{64}$/);
    const row = await first.ctx.db.serverState.findUniqueOrThrow({ where: { key: "tlsCa" } });
    expect(JSON.parse(row.value)).toMatchObject({ certPem: expect.stringContaining("BEGIN CERTIFICATE"), keyPem: expect.stringContaining("PRIVATE KEY") });

    const pem = await httpsRequest(`${first.url}/ca.pem`, { ca: status.caPem! });
    expect(pem.status).toBe(200);
    expect(pem.headers["x-drover-ca-sha256"]).toBe(status.caFingerprint);
    expect(pem.headers["strict-transport-security"]).toBe(HSTS);
    expect(pem.text).not.toContain("PRIVATE KEY");

    const leaf = await presented(first.port);
    for (const name of ["DNS:localhost", "IP Address:127.0.0.1", `DNS:${os.hostname().toLowerCase()}`]) expect(leaf.subjectaltname).toContain(name);
    expect(leaf.issuerCertificate.fingerprint256.replaceAll(":", "").toLowerCase()).toBe(status.caFingerprint);
  });

  it("every server on the database (a cluster, or this one restarted) presents a certificate of the same CA", async () => {
    const second = await startTestServer({ DROVER_TLS: "auto" }, { sameDatabaseAs: first });
    try {
      expect(second.ctx.tls.caFingerprint).toBe(first.ctx.tls.caFingerprint);
      // Trusting the first server's CA alone, the second answers.
      expect((await httpsRequest(`${second.url}/healthz`, { ca: first.ctx.tls.caPem! })).status).toBe(200);
      // Its own certificate, of that CA.
      expect((await presented(second.port)).fingerprint256).not.toBe((await presented(first.port)).fingerprint256);
      // A session the first issued resumes on the second (ticket keys from the CA's key, not the server's own:
      // server/tls/session-tickets.ts), and the second counts it resumed.
      const resumed = async (server: TestServer) => ((await server.ctx.metrics.tlsHandshakes.get()).values.find((v) => v.labels.session === "resumed")?.value ?? 0);
      const before = await resumed(second);
      const fromFirst = await handshake(first.port, first.ctx.tls.caPem!);
      expect((await handshake(second.port, first.ctx.tls.caPem!, fromFirst.session)).reused).toBe(true);
      expect(await resumed(second)).toBe(before + 1);
    } finally {
      await second.close();
    }
  }, 30_000);

  // Once (SQLite): the pin is checked in the agent, before it sends anything; the enrollment and
  // heartbeats over TLS run on both databases (tests/device-certificates, in process).
  it.skipIf(testOnPostgres)("a real agent pinned to it enrolls; one pinned to another CA sends nothing and says why", async () => {
    const fingerprint = first.ctx.tls.caFingerprint!;
    const pinned = new AgentProcess(["--server", first.url, "--name", "auto-pinned", "--state-dir", path.join(first.dir, "auto-pinned"), "--ca-fingerprint", fingerprint], { preload: [HEALTHY_HOST] });
    const enrolled = await pinned.waitFor("enrolled");
    expect((await first.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    await eventually(async () => {
      const d = await first.api<{ summary: string }>("GET", "/devices/auto-pinned");
      return d.status === 200 && d.body.summary === "Online" ? true : undefined;
    }, 20_000, "the pinned agent Online");
    pinned.kill("SIGTERM");
    expect(await pinned.exited).toBe(0);

    const dir = fs.mkdtempSync(path.join(first.dir, "other-ca-"));
    const other = makeTestCa(dir, "someone-else");
    const refused = new AgentProcess(["--server", first.url, "--name", "auto-refused", "--state-dir", path.join(first.dir, "auto-refused"), "--ca-fingerprint", other.fingerprint]);
    const failed = await refused.waitFor("enrollment.failed");
    expect(JSON.stringify(failed.error)).toContain(`server certificate is not signed by the pinned CA (sha256 ${other.fingerprint})`);
    refused.kill("SIGTERM");
    expect(await refused.exited).toBe(0);
    const requests = await first.api<{ items: { deviceName: string }[] }>("GET", "/enrollments");
    expect(requests.body.items.filter((e) => e.deviceName === "auto-refused")).toEqual([]);
  }, 60_000);

  it("servers making the CA at once on a fresh database agree on one (the first write wins)", async () => {
    const second = await startTestServer({}, { sameDatabaseAs: first });
    try {
      await first.ctx.db.serverState.delete({ where: { key: "tlsCa" } });
      const [a, b] = await Promise.all([loadOrCreateCa(first.ctx.db, x509Signer, new Date()), loadOrCreateCa(second.ctx.db, x509Signer, new Date())]);
      expect(a.certPem).toBe(b.certPem);
      expect(a.keyPem).toBe(b.keyPem);
    } finally {
      await second.close();
    }
  });
});
