/**
 * Issue 23, item 4: devices identified by client certificates behind a proxy that ends TLS
 * (DROVER_TLS=proxy). The proxy forwards the certificate the device presented to it in a header
 * (X-Client-Cert), believed only from DROVER_TRUSTED_PROXIES and checked as one from the server's
 * own handshake. First the header itself, sent by the test from a trusted address (127.0.0.1) and
 * from one that is not (127.0.0.2); then Debian's real nginx in front, run with
 * docs/nginx/drover.conf, and the built agent through it.
 *
 * Once, on SQLite: the lookups are tests/device-certificates' (both databases); what is new here
 * (the header, nginx) does not differ by database.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess, eventually, HEALTHY_HOST } from "../agent/test-support/agent-process";
import { certificateRequest, newDeviceKey } from "../agent/device-certificate";
import { MAX_WAIT_SECONDS } from "../lib/protocol";
import { x509Signer } from "../server/tls/signer";
import { enrollmentBody, expectError, heartbeatBody, newSecret, uniqueName } from "./helpers/devices";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { httpsRequest, issueTestServerCertificate, makeTestCa, type TestCa } from "./helpers/tls";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((file) => fs.existsSync(file));
const CONF = path.resolve(import.meta.dirname, "../docs/nginx/drover.conf");

interface CertifiedDevice {
  id: string;
  name: string;
  key: string;
  cert: string;
}

type Answer<T = unknown> = { status: number; body: T };

/** An agent API call over plain HTTP to the server, from `from` (127.0.0.1 is the trusted proxy), with these headers. */
function direct<T = unknown>(server: TestServer, method: string, p: string, headers: Record<string, string>, body?: unknown, from = "127.0.0.1"): Promise<Answer<T>> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${server.url}/api/agent/v1${p}`,
      { method, localAddress: from, agent: false, headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: (text ? JSON.parse(text) : undefined) as T }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** What nginx's $ssl_client_escaped_cert holds: the PEM, URL-escaped. */
const escaped = (pem: string) => encodeURIComponent(pem);

/** RFC 9440's Client-Cert form: the DER as a structured-field byte sequence. */
const rfc9440 = (pem: string) => `:${new X509Certificate(pem).raw.toString("base64")}:`;

/** An enrollment request's body with a CSR (this server refuses tokens). */
const withCsr = (name: string) => ({ ...enrollmentBody(name, newSecret()), csr: certificateRequest(newDeviceKey(), name) });

/** Enroll with a CSR (no certificate needed for that), approve, take the certificate: what an agent's first start does. */
async function enrollByCsr(server: TestServer, name = uniqueName("proxied")): Promise<CertifiedDevice> {
  const key = newDeviceKey();
  const secret = newSecret();
  const created = await server.agent<{ enrollmentId: string }>("POST", "/enrollments", { ...enrollmentBody(name, secret), csr: certificateRequest(key, name) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await server.api("POST", `/enrollments/${created.body.enrollmentId}/approve`, {})).status).toBe(200);
  const decision = await server.agent<{ certificate?: string }>("GET", `/enrollments/${created.body.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
  const device = await server.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { id: true } });
  return { id: device.id, name, key, cert: decision.body.certificate! };
}

const row = (server: TestServer, name: string) =>
  server.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { lastSeen: true, reported: true, certFingerprint: true, certPreviousFingerprint: true, credentialRevokedAt: true } });

const fingerprintOf = (pem: string) => createHash("sha256").update(new X509Certificate(pem).raw).digest("hex");

let s: TestServer;
/** nginx's files; its workers run as nobody when the tests run as root, so readable by all. */
let dir: string;
/** The CA of nginx's certificate: the one devices pin (DROVER_TLS_CA, served at /ca.pem). */
let ca: TestCa;

beforeAll(async () => {
  if (testOnPostgres) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-nginx-"));
  fs.chmodSync(dir, 0o755);
  ca = makeTestCa(dir, "proxy-ca");
  // Tokens refused, so only a certificate identifies a device.
  s = await startTestServer({
    DROVER_TLS: "proxy",
    DROVER_TRUSTED_PROXIES: "127.0.0.1",
    DROVER_TLS_CA: ca.caFile,
    DROVER_DEVICE_TOKENS: "refuse",
    DROVER_HEARTBEAT_SECONDS: "1",
  });
});

afterAll(async () => {
  AgentProcess.killAll();
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(testOnPostgres)("a client certificate forwarded in a header (DROVER_TLS=proxy, DROVER_TRUSTED_PROXIES=127.0.0.1)", () => {
  it("from the trusted proxy identifies the device, URL-escaped PEM or RFC 9440's form; renewal works over it", async () => {
    expect(s.ctx.tls.mode).toBe("proxy");
    expect(s.url).toMatch(/^http:/);
    const d = await enrollByCsr(s);
    const beat = await direct(s, "POST", "/status", { "x-client-cert": escaped(d.cert) }, heartbeatBody());
    expect(beat.status, JSON.stringify(beat.body)).toBe(200);
    expect((await row(s, d.name)).lastSeen).not.toBeNull();
    expect((await direct(s, "GET", "/work?wait=0", { "x-client-cert": rfc9440(d.cert) })).status).toBe(200);

    const key = newDeviceKey();
    const renewed = await direct<{ certificate: string }>(s, "POST", "/certificate", { "x-client-cert": escaped(d.cert) }, { csr: certificateRequest(key, d.name) });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    // Recorded over the forwarded certificate: it stays accepted until the new one is used.
    expect(await row(s, d.name)).toMatchObject({ certFingerprint: fingerprintOf(renewed.body.certificate), certPreviousFingerprint: fingerprintOf(d.cert) });
    expect((await direct(s, "POST", "/status", { "x-client-cert": escaped(renewed.body.certificate) }, heartbeatBody())).status).toBe(200);
    expectError(await direct(s, "POST", "/status", { "x-client-cert": escaped(d.cert) }, heartbeatBody()), 401, "UNAUTHENTICATED", /not the certificate this server last issued/);
  });

  it("from anyone else is refused, saying so, even for the device's own certificate, and changes nothing", async () => {
    const d = await enrollByCsr(s);
    const before = await row(s, d.name);
    for (const [method, p, body] of [["POST", "/status", heartbeatBody()], ["GET", "/work?wait=0", undefined], ["POST", "/certificate", { csr: certificateRequest(d.key, d.name) }]] as const) {
      expectError(
        await direct(s, method, p, { "x-client-cert": escaped(d.cert) }, body, "127.0.0.2"),
        401,
        "UNAUTHENTICATED",
        "client certificate refused: the x-client-cert header is read only from a proxy in DROVER_TRUSTED_PROXIES, and 127.0.0.2 is not one",
      );
    }
    // Without the header that peer is simply a client with no credential.
    expectError(await direct(s, "POST", "/status", {}, heartbeatBody(), "127.0.0.2"), 401, "UNAUTHENTICATED", /missing client certificate/);
    expect(await row(s, d.name)).toEqual(before);
  });

  it("checks a forwarded certificate as a handshake's: expired, another CA, a CA, unissued, another device's, not a certificate: 401 saying why", async () => {
    const d = await enrollByCsr(s);
    const other = await enrollByCsr(s);
    const before = await row(s, d.name);
    const ca = s.ctx.deviceCa!;
    const csr = certificateRequest(newDeviceKey(), d.name);
    const refused = async (value: string, why: RegExp) =>
      expectError(await direct(s, "POST", "/status", { "x-client-cert": value }, heartbeatBody()), 401, "UNAUTHENTICATED", why);

    const expired = await ca.signer.issueClientCertificate(ca.ca, csr, d, 3600, new Date(Date.now() - 2 * 86_400_000));
    await refused(escaped(expired.certPem), /^client certificate refused: it has expired/);
    const strangeCa = await x509Signer.createCa("another CA", new Date());
    const strange = await x509Signer.issueClientCertificate(strangeCa, csr, d, 3600, new Date());
    await refused(escaped(strange.certPem), /^client certificate refused: it is not signed by this server's CA$/);
    // The CA's own certificate verifies against itself: still no device's.
    await refused(escaped(ca.ca.certPem), /^client certificate refused: it is not a client certificate/);
    const unissued = await ca.signer.issueClientCertificate(ca.ca, csr, d, 3600, new Date());
    await refused(rfc9440(unissued.certPem), /not the certificate this server last issued/);
    const naming = await ca.signer.issueClientCertificate(ca.ca, csr, other, 3600, new Date());
    await s.ctx.db.device.update({ where: { id: d.id }, data: { certFingerprint: naming.fingerprint } });
    await refused(escaped(naming.certPem), /names another device/);
    await s.ctx.db.device.update({ where: { id: d.id }, data: { certFingerprint: before.certFingerprint } });
    for (const junk of ["yes", "%E0%A4%A", ":bm90IGEgY2VydGlmaWNhdGU=:", escaped(d.key)]) {
      await refused(junk, /^client certificate refused: the x-client-cert header from the proxy holds no certificate/);
    }
    expect(await row(s, d.name)).toEqual(before);
    expect((await row(s, other.name)).lastSeen).toBeNull();
  });
});

/** A port nothing listens on now (the kernel's choice, released). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** docs/nginx/drover.conf with only its lines marked "test:" changed; each must still be there. */
function nginxConfig(upstreamPort: number, port: number, cert: { certFile: string; keyFile: string }): string {
  let text = fs.readFileSync(CONF, "utf8");
  const replace = (line: RegExp, by: string) => {
    expect(text.match(new RegExp(line, "gm")), `docs/nginx/drover.conf: ${line}`).toHaveLength(1);
    text = text.replace(line, by);
  };
  replace(/^ {4}server 127\.0\.0\.1:3000;.*$/m, `    server 127.0.0.1:${upstreamPort};`);
  replace(/^ {4}listen 443 ssl;.*$/m, `    listen 127.0.0.1:${port} ssl;`);
  replace(/^ {4}ssl_certificate \/etc\/drover\/tls\/server\.pem;.*$/m, `    ssl_certificate ${cert.certFile};`);
  replace(/^ {4}ssl_certificate_key \/etc\/drover\/tls\/server\.key;.*$/m, `    ssl_certificate_key ${cert.keyFile};`);
  return text;
}

const NGINX_TITLE = NGINX ? "behind Debian's nginx, configured by docs/nginx/drover.conf" : "behind nginx: SKIPPED, nginx is not installed (apt-get install nginx-light)";
if (!NGINX && !testOnPostgres) console.warn(`${path.basename(import.meta.filename)}: nginx is not installed (apt-get install nginx-light): its nginx tests are skipped`);

describe.skipIf(testOnPostgres || !NGINX)(NGINX_TITLE, () => {
  let nginx: ChildProcess;
  let url: string;
  let nginxLog = "";

  beforeAll(async () => {
    const leaf = issueTestServerCertificate(ca, dir, "nginx");
    // The certificate, then its CA: an agent pinned to the CA's fingerprint (as install.sh starts it) finds it in the chain.
    const cert = { certFile: path.join(dir, "nginx-chain.pem"), keyFile: leaf.keyFile };
    fs.writeFileSync(cert.certFile, fs.readFileSync(leaf.certFile, "utf8").trimEnd() + "\n" + ca.caPem);
    const port = await freePort();
    fs.writeFileSync(path.join(dir, "drover.conf"), nginxConfig(s.port, port, cert));
    const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `${kind}_temp_path ${path.join(dir, kind)};`).join("\n  ");
    fs.writeFileSync(
      path.join(dir, "nginx.conf"),
      `worker_processes 1;\nevents { worker_connections 256; }\nhttp {\n  access_log off;\n  ${temp}\n  include ${path.join(dir, "drover.conf")};\n}\n`,
    );
    execFileSync(NGINX!, ["-t", "-q", "-p", dir, "-c", path.join(dir, "nginx.conf"), "-g", `pid ${path.join(dir, "nginx.pid")}; error_log stderr;`], { stdio: "pipe" });
    nginx = spawn(NGINX!, ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-g", `daemon off; pid ${path.join(dir, "nginx.pid")}; error_log stderr warn;`], { stdio: ["ignore", "ignore", "pipe"] });
    nginx.stderr?.on("data", (chunk: Buffer) => (nginxLog += chunk.toString("utf8")));
    url = `https://localhost:${port}`;
    await eventually(() => httpsRequest(`${url}/healthz`, { ca: ca.caPem }).then((r) => r.status === 200, () => false), 10_000, `nginx on ${port} (${nginxLog})`);
  });

  afterAll(async () => {
    AgentProcess.killAll();
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once("exit", resolve));
      nginx.kill("SIGQUIT");
      await exited;
    }
  });

  /** An agent API call to nginx over TLS, presenting `cert` when given, from `from`. */
  function viaNginx<T = unknown>(
    method: string,
    p: string,
    credential: { cert?: string; key?: string },
    body?: unknown,
    headers: Record<string, string> = {},
    from = "127.0.0.1",
  ): Promise<Answer<T>> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        `${url}/api/agent/v1${p}`,
        { method, ca: ca.caPem, ...credential, localAddress: from, agent: false, headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: (text ? JSON.parse(text) : undefined) as T }));
        },
      );
      req.on("error", reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  interface StoredIdentity {
    key?: string;
    certificate?: string;
    token?: string;
  }

  it("a real agent enrolls by CSR through nginx, is identified by its certificate alone, and is cut off by its decommission", async () => {
    const name = uniqueName("nginx");
    const stateDir = path.join(s.dir, name);
    // Pinned as the console's install line pins it: the CA /ca.pem serves, by its fingerprint.
    const served = await httpsRequest(`${url}/ca.pem`, { ca: ca.caPem });
    expect(served.headers["x-drover-ca-sha256"]).toBe(ca.fingerprint);
    expect(s.ctx.tls.caFingerprint).toBe(ca.fingerprint);
    const agent = new AgentProcess(["--server", url, "--name", name, "--state-dir", stateDir, "--ca-fingerprint", ca.fingerprint], { preload: [HEALTHY_HOST] });
    const enrolled = await agent.waitFor("enrolled");
    const request = await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: String(enrolled.enrollmentId) }, select: { csr: true } });
    expect(request.csr).toContain("BEGIN CERTIFICATE REQUEST");
    expect((await s.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    await agent.waitFor("approved");
    const file = path.join(stateDir, "identity.json");
    const first = JSON.parse(fs.readFileSync(file, "utf8")) as StoredIdentity;
    expect(first.token).toBeUndefined();
    expect((await row(s, name)).certFingerprint).toBe(fingerprintOf(first.certificate!));
    // Tokens are refused here: a heartbeat counted is the certificate nginx forwarded.
    await eventually(async () => ((await row(s, name)).lastSeen ? true : undefined), 10_000, "a heartbeat through nginx");
    const seen = (await row(s, name)).lastSeen!;
    await eventually(async () => ((await row(s, name)).lastSeen! > seen ? true : undefined), 10_000, "a second heartbeat (1 s)");

    // Its long-poll held through nginx (only its own: this server's other polls answer at once) ends at the decommission
    // request, and the agent reports its way out through nginx.
    await eventually(async () => ((await s.ctx.metrics.heldPolls.get()).values[0]?.value === 1 ? true : undefined), 10_000, "the agent's poll held");
    expect((await s.api("POST", `/devices/${name}/decommission`, {})).status).toBe(200);
    expect(await agent.exited).toBe(0);
    expect((await row(s, name)).credentialRevokedAt).not.toBeNull();
    expectError(await viaNginx("GET", "/work?wait=0", { cert: first.certificate!, key: first.key! }), 401, "UNAUTHENTICATED", /credential revoked/);
  }, 60_000);

  it("renews a certificate through nginx: the new one works there, and once it is used the old one is refused", async () => {
    const d = await enrollByCsr(s);
    const key = newDeviceKey();
    const renewed = await viaNginx<{ certificate: string }>("POST", "/certificate", d, { csr: certificateRequest(key, d.name) });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    expect((await row(s, d.name)).certFingerprint).toBe(fingerprintOf(renewed.body.certificate));
    expect((await viaNginx("POST", "/status", { cert: renewed.body.certificate, key }, heartbeatBody())).status).toBe(200);
    expectError(await viaNginx("POST", "/status", d, heartbeatBody()), 401, "UNAUTHENTICATED", /not the certificate this server last issued/);
  });

  it("the rest of the configuration: the client's address and https forwarded, HSTS, long-polls held past their longest wait, live events as they happen", async () => {
    // The request from 127.0.0.5 reaches the server from nginx (127.0.0.1, trusted): X-Forwarded-For names the device.
    const name = uniqueName("address");
    const created = await viaNginx<{ enrollmentId: string }>("POST", "/enrollments", {}, withCsr(name), {}, "127.0.0.5");
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const request = await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: created.body.enrollmentId }, select: { clientAddress: true } });
    expect(request.clientAddress).toBe("127.0.0.5");
    // X-Forwarded-Proto: install.sh sends devices to the https:// address they came to.
    const script = await httpsRequest(`${url}/install.sh`, { ca: ca.caPem });
    expect(script.text).toContain(`SERVER="${url}"`);
    // HSTS is nginx's to send (Drover sends it only over its own TLS), on errors too.
    expect(script.headers["strict-transport-security"]).toBe("max-age=31536000");
    expect((await httpsRequest(`${url}/api/nothing`, { ca: ca.caPem })).headers["strict-transport-security"]).toBe("max-age=31536000");
    // nginx must hold a poll longer than the longest the protocol lets a device ask for.
    const readTimeout = /^\s*proxy_read_timeout (\d+)s;/m.exec(fs.readFileSync(CONF, "utf8"))?.[1];
    expect(Number(readTimeout)).toBeGreaterThan(MAX_WAIT_SECONDS);

    // The console's live stream (tRPC over server-sent events) arrives through nginx as it happens.
    let text = "";
    const live = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = https.request(`${url}/api/trpc/events.live?input=${encodeURIComponent("{}")}`, {
        ca: ca.caPem,
        agent: false,
        headers: { authorization: `Bearer ${s.adminToken}`, accept: "text/event-stream" },
      });
      req.on("response", resolve).on("error", reject).end();
    });
    try {
      expect(live.statusCode).toBe(200);
      live.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      const later = uniqueName("live");
      expect((await viaNginx("POST", "/enrollments", {}, withCsr(later))).status).toBe(201);
      await eventually(() => text.includes(`"objectName":"${later}"`), 5_000, `the enrollment's event on the live stream through nginx (${text.length} characters so far)`);
    } finally {
      live.destroy();
    }
  });

  it("a header a client sends never passes nginx, a certificate of another CA is refused by the server, and nothing changes", async () => {
    const d = await enrollByCsr(s);
    const before = await row(s, d.name);
    // nginx replaces the client's X-Client-Cert with the certificate it saw: none here.
    expectError(await viaNginx("POST", "/status", {}, heartbeatBody(), { "x-client-cert": escaped(d.cert) }), 401, "UNAUTHENTICATED", /missing client certificate/);
    // nginx asks for no particular CA and verifies nothing (optional_no_ca): the server does.
    const strangeCa = await x509Signer.createCa("another CA", new Date());
    const key = newDeviceKey();
    const strange = await x509Signer.issueClientCertificate(strangeCa, certificateRequest(key, d.name), d, 3600, new Date());
    expectError(await viaNginx("POST", "/status", { cert: strange.certPem, key }, heartbeatBody()), 401, "UNAUTHENTICATED", /not signed by this server's CA/);
    expect(await row(s, d.name)).toEqual(before);
    // The device's own certificate, presented to nginx, is the device.
    expect((await viaNginx("POST", "/status", { cert: d.cert, key: d.key }, heartbeatBody())).status).toBe(200);
  });
});
