/**
 * Where a request's client certificate is read from (issue 23, item 4): the header a proxy
 * forwards, only under DROVER_TLS=proxy and only from DROVER_TRUSTED_PROXIES. One row per rule;
 * the checks of the certificate itself and the whole path over HTTP and nginx are
 * tests/device-certificates-proxy's.
 */
import type { IncomingMessage } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { certificateRequest, newDeviceKey } from "../../agent/device-certificate";
import { readEnv as readEnvFrom } from "../env";
import { x509Signer } from "../tls/signer";
import { presentedCertificate, type DeviceCa } from "./certificates";

let deviceCa: DeviceCa;
let certPem: string;
let fingerprint: string;

beforeAll(async () => {
  deviceCa = { ca: await x509Signer.createCa("device CA", new Date()), signer: x509Signer };
  const issued = await x509Signer.issueClientCertificate(deviceCa.ca, certificateRequest(newDeviceKey(), "d"), { id: "device-1", name: "d" }, 3600, new Date());
  certPem = issued.certPem;
  fingerprint = issued.fingerprint;
});

const readEnv = (vars: Record<string, string>) => readEnvFrom(vars as NodeJS.ProcessEnv);

/** What the function reads of a request: its headers and its socket's peer (a plain socket: no handshake certificate). */
const request = (peer: string, headers: Record<string, string> = {}) => ({ headers, socket: { remoteAddress: peer } }) as unknown as IncomingMessage;

describe("presentedCertificate: the header a proxy forwards", () => {
  const proxy = { DROVER_TLS: "proxy", DROVER_TRUSTED_PROXIES: "127.0.0.1,10.0.0.0/8" };
  it.each([
    ["from a trusted proxy: the device's", proxy, "127.0.0.1", true, "device"],
    ["from a trusted range, as an IPv4-mapped address", proxy, "::ffff:10.1.2.3", true, "device"],
    ["from a trusted proxy, no header: none (a browser, an enrollment)", proxy, "127.0.0.1", false, null],
    ["from anyone else: refused, saying so", proxy, "192.0.2.7", true, /x-client-cert header is read only from a proxy in DROVER_TRUSTED_PROXIES, and 192\.0\.2\.7 is not one/],
    ["from anyone else, no header: none", proxy, "192.0.2.7", false, null],
    ["under auto, from a trusted address: not read (a proxy there passes TLS through)", { DROVER_TLS: "auto", DROVER_TRUSTED_PROXIES: "127.0.0.1" }, "127.0.0.1", true, null],
    ["without TLS: not read", { DROVER_TRUSTED_PROXIES: "127.0.0.1" }, "127.0.0.1", true, null],
  ] as const)("%s", (_rule, vars, peer, withHeader, expected) => {
    const ctx = { env: readEnv(vars), deviceCa };
    const req = request(peer, withHeader ? { "x-client-cert": encodeURIComponent(certPem) } : {});
    if (expected instanceof RegExp) expect(() => presentedCertificate(ctx, req)).toThrow(expected);
    else expect(presentedCertificate(ctx, req)).toEqual(expected === "device" ? { fingerprint, deviceId: "device-1" } : null);
  });

  it("reads the header the operator named, and no other", () => {
    const ctx = { env: readEnv({ ...proxy, DROVER_CLIENT_CERT_HEADER: "X-Amzn-Mtls-Clientcert" }), deviceCa };
    expect(presentedCertificate(ctx, request("127.0.0.1", { "x-amzn-mtls-clientcert": encodeURIComponent(certPem) }))).toEqual({ fingerprint, deviceId: "device-1" });
    expect(presentedCertificate(ctx, request("127.0.0.1", { "x-client-cert": encodeURIComponent(certPem) }))).toBeNull();
  });
});

describe("presentedCertificate: the handshake's certificate", () => {
  /** A TLS socket whose handshake verified `validTo`'s certificate (a held connection, or a session resumed on a ticket). */
  const overTls = (validTo: Date) =>
    ({
      headers: {},
      socket: { encrypted: true, authorized: true, getPeerCertificate: () => ({ raw: Buffer.from("der"), valid_to: validTo.toUTCString(), subjectaltname: "URI:urn:drover:device:device-1" }) },
    }) as unknown as IncomingMessage;

  it("is refused once it has expired, whatever the handshake said when it ran", () => {
    const ctx = { env: readEnv({ DROVER_TLS: "auto" }), deviceCa };
    expect(presentedCertificate(ctx, overTls(new Date(Date.now() + 60_000)))).not.toBeNull();
    expect(() => presentedCertificate(ctx, overTls(new Date(Date.now() - 1_000)))).toThrow(/it has expired/);
  });
});
