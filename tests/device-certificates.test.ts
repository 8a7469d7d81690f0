/**
 * Issue 23, item 3, on both databases: devices identified by client certificates over real TLS
 * (DROVER_TLS=auto). A device enrolls with a CSR and gets a certificate its key goes with,
 * renews it over itself (the old one refused from then on), moves over from a token, and is cut
 * off when its decommission completes. Expired, revoked, unknown-CA and wrong-device certificates
 * are each refused with 401 and a message saying why, and change nothing. With
 * DROVER_DEVICE_TOKENS=refuse bearer tokens are refused.
 */
import { X509Certificate, createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { AgentProcess, eventually, HEALTHY_HOST } from "../agent/test-support/agent-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { certificateRequest, newDeviceKey } from "../agent/device-certificate";
import { sha256 } from "../server/lib/crypto";
import { x509Signer } from "../server/tls/signer";
import { enrollDevice, enrollmentBody, expectError, heartbeatBody, newSecret, uniqueName } from "./helpers/devices";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { httpsRequest } from "./helpers/tls";

let s: TestServer;
let refusing: TestServer;
/** Certificates of 15 s, so that a real agent renews within a test (past two thirds: 10 s). */
let shortLived: TestServer;
/** Approves requests labelled auto=yes at once. */
let auto: TestServer;

beforeAll(async () => {
  [s, refusing, shortLived, auto] = await Promise.all([
    startTestServer({ DROVER_TLS: "auto" }),
    startTestServer({ DROVER_TLS: "auto", DROVER_DEVICE_TOKENS: "refuse" }),
    startTestServer({ DROVER_TLS: "auto", DROVER_DEVICE_CERT_SECONDS: "15", DROVER_HEARTBEAT_SECONDS: "2" }),
    startTestServer({ DROVER_TLS: "auto", DROVER_AUTO_APPROVE: "auto=yes" }),
  ]);
});

afterAll(async () => {
  AgentProcess.killAll();
  await Promise.all([s?.close(), refusing?.close(), shortLived?.close(), auto?.close()]);
});

interface Credential {
  cert?: string;
  key?: string;
  token?: string;
}

/** An agent API call over TLS presenting `credential`. */
async function call<T = unknown>(server: TestServer, method: string, path: string, credential: Credential, body?: unknown) {
  const res = await httpsRequest(`${server.url}/api/agent/v1${path}`, {
    ca: server.ctx.tls.caPem!,
    method,
    ...(credential.cert ? { cert: credential.cert, key: credential.key } : {}),
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(credential.token ? { authorization: `Bearer ${credential.token}` } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (res.text ? JSON.parse(res.text) : undefined) as T };
}

interface CertifiedDevice {
  id: string;
  name: string;
  key: string;
  cert: string;
  enrollmentId: string;
  secret: string;
}

/** What an agent does at its first start with a key of its own: enroll with a CSR, be approved, take the certificate. */
async function enrollByCsr(server: TestServer, name = uniqueName("cert")): Promise<CertifiedDevice> {
  const key = newDeviceKey();
  const secret = newSecret();
  const created = await call<{ enrollmentId: string; status: string }>(server, "POST", "/enrollments", {}, { ...enrollmentBody(name, secret), csr: certificateRequest(key, "ignored-name") });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await server.api("POST", `/enrollments/${created.body.enrollmentId}/approve`, {})).status).toBe(200);
  const decision = await server.agent<{ status: string; token?: string; certificate?: string }>("GET", `/enrollments/${created.body.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
  expect(decision.body.status).toBe("Approved");
  expect(decision.body.token).toBeUndefined();
  const cert = decision.body.certificate!;
  const device = await server.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { id: true } });
  return { id: device.id, name, key, cert, enrollmentId: created.body.enrollmentId, secret };
}

const row = (server: TestServer, name: string) =>
  server.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { lastSeen: true, reported: true, certFingerprint: true, certNotAfter: true, credentialRevokedAt: true } });

describe("devices identified by client certificates (DROVER_TLS=auto)", () => {
  it("enrolls with a CSR: the certificate is for the device's key, names the device, is the one recorded, and authenticates it", async () => {
    const d = await enrollByCsr(s);
    const x = new X509Certificate(d.cert);
    expect(x.subject).toBe(`CN=${d.name}`);
    expect(x.subjectAltName).toBe(`URI:urn:drover:device:${d.id}`);
    expect(x.checkIssued(new X509Certificate(s.ctx.tls.caPem!))).toBe(true);
    expect(x.publicKey.export({ type: "spki", format: "pem" })).toBe(
      (await import("node:crypto")).createPublicKey(d.key).export({ type: "spki", format: "pem" }),
    );
    // 30 days by default.
    expect(Math.round((new Date(x.validTo).getTime() - Date.now()) / 86_400_000)).toBe(30);
    const stored = await row(s, d.name);
    expect(stored.certFingerprint).toBe(x.fingerprint256.replaceAll(":", "").toLowerCase());
    expect(stored.certNotAfter?.toISOString()).toBe(new Date(x.validTo).toISOString());
    // Its answer lost on the way: asked again before the device is seen, the same certificate, still the one recorded.
    const decision = (secret: string) => s.agent<{ status: string; certificate?: string }>("GET", `/enrollments/${d.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
    expect((await decision(d.secret)).body).toEqual({ status: "Approved", certificate: d.cert });
    expect((await row(s, d.name)).certFingerprint).toBe(stored.certFingerprint);

    const beat = await call(s, "POST", "/status", d, heartbeatBody());
    expect(beat.status, JSON.stringify(beat.body)).toBe(200);
    expect((await row(s, d.name)).lastSeen).not.toBeNull();
    // Seen: it arrived, and asking again gives nothing.
    expect((await decision(d.secret)).body).toEqual({ status: "Approved" });
    expect((await call(s, "GET", "/work?wait=0", d)).status).toBe(200);
  });

  it("approved at once, the request's answer carries the device's certificate, and it works", async () => {
    const name = uniqueName("auto-cert");
    const key = newDeviceKey();
    const secret = newSecret();
    const created = await call<{ enrollmentId: string; status: string; certificate?: string; token?: string }>(auto, "POST", "/enrollments", {}, {
      ...enrollmentBody(name, secret, { auto: "yes" }),
      csr: certificateRequest(key, "ignored-name"),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({ enrollmentId: expect.any(String), status: "Approved", certificate: expect.stringContaining("BEGIN CERTIFICATE") });
    const x = new X509Certificate(created.body.certificate!);
    const stored = await auto.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { id: true, certFingerprint: true, tokenHash: true } });
    expect(x.subjectAltName).toBe(`URI:urn:drover:device:${stored.id}`);
    expect(stored.certFingerprint).toBe(x.fingerprint256.replaceAll(":", "").toLowerCase());
    expect(stored.tokenHash).toBeNull();
    // The decision gives the same one until the device is seen.
    const decision = await auto.agent<{ status: string; certificate?: string }>("GET", `/enrollments/${created.body.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
    expect(decision.body).toEqual({ status: "Approved", certificate: created.body.certificate });
    const beat = await call(auto, "POST", "/status", { cert: created.body.certificate!, key }, heartbeatBody());
    expect(beat.status, JSON.stringify(beat.body)).toBe(200);
  });

  it("renews over the current certificate: the new one works, and once it is used the old one is refused", async () => {
    const d = await enrollByCsr(s);
    const key = newDeviceKey();
    const renewed = await call<{ certificate: string; notAfter: string }>(s, "POST", "/certificate", d, { csr: certificateRequest(key, d.name) });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    expect(new Date(renewed.body.notAfter).toISOString()).toBe(new Date(new X509Certificate(renewed.body.certificate).validTo).toISOString());
    // Its answer lost on the way: the device asks again over the old certificate, still accepted; the first new one is not.
    const again = await call<{ certificate: string; notAfter: string }>(s, "POST", "/certificate", d, { csr: certificateRequest(key, d.name) });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expectError(await call(s, "POST", "/status", { cert: renewed.body.certificate, key }, heartbeatBody()), 401, "UNAUTHENTICATED", /not the certificate this server last issued/);
    expect((await call(s, "POST", "/status", d, heartbeatBody())).status).toBe(200);
    // The new one used: from then on the old one is refused.
    expect((await call(s, "POST", "/status", { cert: again.body.certificate, key }, heartbeatBody())).status).toBe(200);
    expect((await row(s, d.name)).certFingerprint).toBe(new X509Certificate(again.body.certificate).fingerprint256.replaceAll(":", "").toLowerCase());
    expectError(await call(s, "POST", "/status", d, heartbeatBody()), 401, "UNAUTHENTICATED", /not the certificate this server last issued/);
    const renewedBody = again.body;
    // A CSR that is not one is refused, and the current certificate stays the one.
    expectError(await call(s, "POST", "/certificate", { cert: renewedBody.certificate, key }, { csr: "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n" }), 400, "INVALID_REQUEST", /csr/);
    expect((await call(s, "GET", "/work?wait=0", { cert: renewedBody.certificate, key })).status).toBe(200);
  });

  it("moves a device enrolled with a token over to a certificate (tokens accepted by default)", async () => {
    const d = await enrollDevice(s);
    const key = newDeviceKey();
    const issued = await call<{ certificate: string }>(s, "POST", "/certificate", { token: d.token }, { csr: certificateRequest(key, d.name) });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect((await call(s, "POST", "/status", { cert: issued.body.certificate, key }, heartbeatBody())).status).toBe(200);
  });

  it("cuts a device off when its decommission completes: its certificate is refused on the next request, on any connection", async () => {
    const d = await enrollByCsr(s);
    // A held poll is answered at once by the decommission request, as for a token.
    const held = call<{ decommission?: boolean }>(s, "GET", "/work?wait=30", d);
    await new Promise((r) => setTimeout(r, 300));
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    expect((await held).body.decommission).toBe(true);
    // The way out still works: its report that decommissioning completed.
    expect((await call(s, "POST", "/status", d, heartbeatBody({ decommissioning: { state: "Completed" } }))).status).toBe(200);
    const before = await row(s, d.name);
    expect(before.credentialRevokedAt).not.toBeNull();
    for (const [method, path, body] of [["POST", "/status", heartbeatBody()], ["GET", "/work?wait=30", undefined], ["POST", "/certificate", { csr: certificateRequest(d.key, d.name) }]] as const) {
      expectError(await call(s, method, path, d, body), 401, "UNAUTHENTICATED", /credential revoked/);
    }
    expect(await row(s, d.name)).toEqual(before);
  });

  it("refuses expired, unknown-CA and wrong-device certificates with 401 saying why, and changes nothing", async () => {
    const d = await enrollByCsr(s);
    const other = await enrollByCsr(s);
    const ca = s.ctx.deviceCa!;
    const before = await row(s, d.name);
    const key = newDeviceKey();
    const csr = certificateRequest(key, d.name);

    const expired = await ca.signer.issueClientCertificate(ca.ca, csr, d, 3600, new Date(Date.now() - 2 * 86_400_000));
    expectError(await call(s, "POST", "/status", { cert: expired.certPem, key }, heartbeatBody()), 401, "UNAUTHENTICATED", /client certificate refused: it has expired/);

    const strangeCa = await x509Signer.createCa("another CA", new Date());
    const strange = await x509Signer.issueClientCertificate(strangeCa, csr, d, 3600, new Date());
    expectError(await call(s, "POST", "/status", { cert: strange.certPem, key }, heartbeatBody()), 401, "UNAUTHENTICATED", /not signed by this server's CA/);

    // Signed by the server's CA for the device, but not the one issued to it (a copy of the CA key, a stale one).
    const unissued = await ca.signer.issueClientCertificate(ca.ca, csr, d, 3600, new Date());
    expectError(await call(s, "POST", "/status", { cert: unissued.certPem, key }, heartbeatBody()), 401, "UNAUTHENTICATED", /not the certificate this server last issued/);

    // Recorded for one device, naming another.
    const naming = await ca.signer.issueClientCertificate(ca.ca, csr, other, 3600, new Date());
    await s.ctx.db.device.update({ where: { id: d.id }, data: { certFingerprint: naming.fingerprint } });
    expectError(await call(s, "POST", "/status", { cert: naming.certPem, key }, heartbeatBody()), 401, "UNAUTHENTICATED", /names another device/);
    await s.ctx.db.device.update({ where: { id: d.id }, data: { certFingerprint: before.certFingerprint } });

    // A certificate comes first: a valid token beside a refused certificate does not let it in.
    const tokenDevice = await enrollDevice(s);
    expectError(await call(s, "POST", "/status", { cert: strange.certPem, key, token: tokenDevice.token }, heartbeatBody()), 401, "UNAUTHENTICATED", /not signed by this server's CA/);

    expect(await row(s, d.name)).toEqual(before);
    expect((await row(s, other.name)).lastSeen).toBeNull();
    expect((await row(s, tokenDevice.name)).lastSeen).toBeNull();
  });
});

const fingerprintOf = (pem: string) => createHash("sha256").update(new X509Certificate(pem).raw).digest("hex");

interface StoredIdentity {
  token?: string;
  key?: string;
  certificate?: string;
}

// Once (SQLite): what the agent does (its key, when it renews, its move-over) does not depend on the
// server's database; the routes it calls (CSR enrollment, renewal, move-over, the decommission's
// cut-off) run on both databases in the tests above.
describe.skipIf(testOnPostgres)("a real agent (the built one) over TLS", () => {
  it("enrolls by CSR (its key 0600, never sent), renews before its certificate ends, and is cut off when its decommission completes", async () => {
    const server = shortLived;
    const name = uniqueName("real");
    const stateDir = path.join(server.dir, name);
    const agent = new AgentProcess(["--server", server.url, "--name", name, "--state-dir", stateDir, "--ca-fingerprint", server.ctx.tls.caFingerprint!], { preload: [HEALTHY_HOST] });
    const enrolled = await agent.waitFor("enrolled");
    const request = await server.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: String(enrolled.enrollmentId) }, select: { csr: true } });
    expect(request.csr).toContain("BEGIN CERTIFICATE REQUEST");
    expect(request.csr).not.toContain("PRIVATE KEY");
    expect((await server.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    await agent.waitFor("approved");

    const file = path.join(stateDir, "identity.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const first = JSON.parse(fs.readFileSync(file, "utf8")) as StoredIdentity;
    expect(first.token).toBeUndefined();
    expect(first.key).toContain("PRIVATE KEY");
    expect((await row(server, name)).certFingerprint).toBe(fingerprintOf(first.certificate!));
    await eventually(async () => ((await row(server, name)).lastSeen ? true : undefined), 20_000, "a heartbeat over the certificate");

    // Past two thirds of its 15 s: a new key and certificate, recorded, and the agent goes on with them.
    await agent.waitFor("certificate.renewal", 30_000);
    const renewed = JSON.parse(fs.readFileSync(file, "utf8")) as StoredIdentity;
    expect(renewed.key).not.toBe(first.key);
    expect((await row(server, name)).certFingerprint).toBe(fingerprintOf(renewed.certificate!));
    const seen = (await row(server, name)).lastSeen!;
    await eventually(async () => ((await row(server, name)).lastSeen! > seen ? true : undefined), 20_000, "a heartbeat over the renewed certificate");
    // The old certificate is refused from then on.
    expectError(await call(server, "POST", "/status", { cert: first.certificate!, key: first.key! }, heartbeatBody()), 401, "UNAUTHENTICATED", /not the certificate this server last issued/);

    const latest = JSON.parse(fs.readFileSync(file, "utf8")) as StoredIdentity;
    expect((await server.api("POST", `/devices/${name}/decommission`, {})).status).toBe(200);
    expect(await agent.exited).toBe(0);
    expect((await row(server, name)).credentialRevokedAt).not.toBeNull();
    expectError(await call(server, "GET", "/work?wait=0", { cert: latest.certificate!, key: latest.key! }), 401, "UNAUTHENTICATED", /credential revoked/);
  }, 90_000);

  it("moves an agent enrolled with a token over to a certificate on its next start", async () => {
    const d = await enrollDevice(s);
    const stateDir = path.join(s.dir, d.name);
    fs.mkdirSync(stateDir, { mode: 0o700 });
    fs.writeFileSync(path.join(stateDir, "identity.json"), JSON.stringify({ version: 1, deviceName: d.name, enrollmentId: d.enrollmentId, token: d.token, decommissioning: false, decommissioned: false }), { mode: 0o600 });
    const agent = new AgentProcess(["--server", s.url, "--name", d.name, "--state-dir", stateDir, "--ca-fingerprint", s.ctx.tls.caFingerprint!], { preload: [HEALTHY_HOST] });
    await agent.waitFor("certificate.move-over");
    const stored = JSON.parse(fs.readFileSync(path.join(stateDir, "identity.json"), "utf8")) as StoredIdentity;
    expect(stored.token).toBeUndefined();
    expect((await row(s, d.name)).certFingerprint).toBe(fingerprintOf(stored.certificate!));
    await eventually(async () => ((await row(s, d.name)).lastSeen ? true : undefined), 20_000, "a heartbeat over the certificate");
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  }, 60_000);
});

describe("DROVER_DEVICE_TOKENS=refuse", () => {
  it("refuses bearer tokens and enrollments without a CSR; certificates work", async () => {
    const name = uniqueName("refuse");
    expectError(await refusing.agent("POST", "/enrollments", enrollmentBody(name, newSecret())), 400, "INVALID_REQUEST", /send a csr/);
    const d = await enrollByCsr(refusing);
    expect((await call(refusing, "POST", "/status", d, heartbeatBody())).status).toBe(200);
    // A token this server once issued (a device enrolled before the switch) is refused, and nothing changes.
    const token = "drvd_old-token-of-an-installed-agent";
    await refusing.ctx.db.device.update({ where: { id: d.id }, data: { tokenHash: sha256(token) } });
    const before = await row(refusing, d.name);
    for (const [method, path, body] of [["POST", "/status", heartbeatBody()], ["GET", "/work?wait=0", undefined], ["POST", "/certificate", { csr: certificateRequest(d.key, d.name) }]] as const) {
      expectError(await call(refusing, method, path, { token }, body), 401, "UNAUTHENTICATED", /DROVER_DEVICE_TOKENS=refuse/);
    }
    expect(await row(refusing, d.name)).toEqual(before);
  });
});

// Once (SQLite): a CSR refused before anything is written (createEnrollment), on a server of its own.
describe.skipIf(testOnPostgres)("without a CA of the server's own", () => {
  it("refuses a CSR (client certificates need DROVER_TLS=auto)", async () => {
    const plain = await startTestServer();
    try {
      expectError(
        await plain.agent("POST", "/enrollments", { ...enrollmentBody(uniqueName("plain"), newSecret()), csr: certificateRequest(newDeviceKey(), "x") }),
        400,
        "INVALID_REQUEST",
        /DROVER_TLS=auto/,
      );
    } finally {
      await plain.close();
    }
  });
});
