/**
 * Devices identified by client certificates (issue 23). The server's CA (DROVER_TLS=auto or
 * proxy only: the one CA whose key the server holds) signs a short-lived certificate for the key a device
 * made (its CSR, at enrollment and at each renewal); the certificate names the device by
 * `urn:drover:device:<id>` and the device row keeps its SHA-256, serial and end. A request is
 * the device's when the TLS handshake presented a certificate that chains to the CA, is within
 * its dates, is the very one last issued to the device it names, and that device's credential
 * is not revoked: all checked on every request, so a decommission cuts a device off at its
 * next request, on any connection, not at its certificate's end. Behind a TLS-terminating
 * proxy (DROVER_TLS=proxy, issue 23 item 4) the certificate arrives in a header, believed only
 * from DROVER_TRUSTED_PROXIES and put through the same checks here.
 */
import { createHash, X509Certificate } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { ServerContext } from "../context";
import { invalid, unauthenticated, type AppError } from "../errors";
import { normalizeAddress, trustedProxyPeer } from "../lib/client-address";
import { DEVICE_URI_PREFIX, type CertificateAuthority, type IssuedClientCertificate, type Signer } from "../tls/auto-ca";
import { InvalidCsr, verifiedCsr } from "../tls/signer";
import type { DeviceWithCredential } from "./agent-store";

export interface DeviceCa {
  ca: CertificateAuthority;
  signer: Signer;
}

export const NO_DEVICE_CA = "this server signs no device certificates (it needs DROVER_TLS=auto or proxy): enroll without a csr";

/**
 * A certificate for `device`'s key (its CSR), from now for DROVER_DEVICE_CERT_SECONDS. Its dates
 * are the wall clock's, not ctx.now(): the TLS handshake checks them against the real one.
 */
export async function signDeviceCertificate(ctx: ServerContext, device: { id: string; name: string }, csrPem: string): Promise<IssuedClientCertificate> {
  if (!ctx.deviceCa) throw invalid(NO_DEVICE_CA);
  try {
    return await ctx.deviceCa.signer.issueClientCertificate(ctx.deviceCa.ca, csrPem, device, ctx.env.DROVER_DEVICE_CERT_SECONDS, new Date());
  } catch (error) {
    if (error instanceof InvalidCsr) throw invalid(error.message);
    throw error;
  }
}

/**
 * The Device columns that record the certificate issued. `previous`: the certificate the
 * renewal was asked over, still accepted until the new one is first used (null: none).
 */
export function certificateColumns(issued: IssuedClientCertificate, previous: string | null = null) {
  return { certFingerprint: issued.fingerprint, certPreviousFingerprint: previous, certSerial: issued.serial, certNotAfter: issued.notAfter };
}

/** Checks a CSR before anything is written (enrollment): 400 naming what is wrong. */
export async function checkCsr(ctx: ServerContext, csrPem: string): Promise<void> {
  if (!ctx.deviceCa) throw invalid(NO_DEVICE_CA);
  try {
    await verifiedCsr(csrPem);
  } catch (error) {
    if (error instanceof InvalidCsr) throw invalid(error.message);
    throw error;
  }
}

/** What the verification said (the TLS layer's code, or ours in the same words), in words an operator reading an agent's log can act on. */
function refusal(code: string): string {
  const why =
    code === "CERT_HAS_EXPIRED"
      ? "it has expired (an agent renews it before its end; one offline past it enrolls again)"
      : code === "CERT_NOT_YET_VALID"
        ? "it is not valid yet (check the device's clock)"
        : code === "INVALID_PURPOSE"
          ? "it is not a client certificate (a CA, or not for clientAuth)"
          : /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|SELF_SIGNED|CERT_SIGNATURE_FAILURE|UNABLE_TO_DECRYPT/.test(code)
            ? "it is not signed by this server's CA"
            : code;
  return `client certificate refused: ${why}`;
}

export interface Presented {
  fingerprint: string;
  /** The device the certificate names (its URI), or null when it names none. */
  deviceId: string | null;
}

/** The device a certificate's URI SAN names (`URI:urn:drover:device:<id>` in Node's subjectaltname text), or null. */
function namedDevice(subjectAltName: string | undefined): string | null {
  const uri = (subjectAltName ?? "")
    .split(", ")
    .map((name) => /^URI:(.*)$/.exec(name)?.[1])
    .find((value) => value?.startsWith(DEVICE_URI_PREFIX));
  return uri ? uri.slice(DEVICE_URI_PREFIX.length) : null;
}

/**
 * The client certificate of this request: under DROVER_TLS=proxy, the one the proxy that ended
 * TLS forwarded in DROVER_CLIENT_CERT_HEADER (issue 23, item 4); otherwise the one this
 * connection's own handshake presented. Null when there is none (a browser, a token, plain
 * HTTP); throws 401 when there is one and it does not verify (expired, another CA), whichever
 * way it came.
 */
export function presentedCertificate(ctx: Pick<ServerContext, "env" | "deviceCa">, req: IncomingMessage): Presented | null {
  if (ctx.env.DROVER_TLS === "proxy") return forwardedByProxy(ctx, req);
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || typeof socket.getPeerCertificate !== "function") return null;
  const peer = socket.getPeerCertificate();
  // No certificate: Node answers an empty object.
  if (!peer || !peer.raw) return null;
  if (!socket.authorized) throw unauthenticated(refusal(String(socket.authorizationError ?? "not verified")));
  // The handshake checked the dates when it ran: a connection held open past the certificate's
  // end, or a TLS session resumed on a ticket (which carries the first handshake's verdict, for
  // up to 24 h), would otherwise go on with an expired certificate. Checked on every request.
  if (Date.now() > Date.parse(peer.valid_to)) throw unauthenticated(refusal("CERT_HAS_EXPIRED"));
  return { fingerprint: createHash("sha256").update(peer.raw).digest("hex"), deviceId: namedDevice(peer.subjectaltname) };
}

/**
 * A certificate is public: the header proves nothing of the key, only the proxy's handshake did.
 * So it is read only where the operator said TLS ends at a proxy (DROVER_TLS=proxy: under `auto`
 * a proxy in front passes TLS through, and a device could write any certificate into the header
 * on its own connection), and only from that proxy's address: from any other a request carrying
 * it is refused, saying so (silently ignored, a proxy missing from DROVER_TRUSTED_PROXIES would
 * show only as every device's "missing client certificate").
 */
function forwardedByProxy(ctx: Pick<ServerContext, "env" | "deviceCa">, req: IncomingMessage): Presented | null {
  const header = ctx.env.DROVER_CLIENT_CERT_HEADER;
  const raw = req.headers[header];
  const forwarded = (Array.isArray(raw) ? raw.join(", ") : (raw ?? "")).trim();
  if (forwarded === "") return null;
  if (!trustedProxyPeer(req, ctx.env.DROVER_TRUSTED_PROXIES)) {
    const peer = normalizeAddress(req.socket.remoteAddress ?? "unknown");
    throw unauthenticated(`client certificate refused: the ${header} header is read only from a proxy in DROVER_TRUSTED_PROXIES, and ${peer} is not one`);
  }
  return forwardedCertificate(ctx.deviceCa, header, forwarded);
}

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
let caCache: { pem: string; x509: X509Certificate } | null = null;

/**
 * A certificate a trusted proxy forwarded, checked here as the handshake checks one (the proxy's
 * own verdict is never taken for it): signed by the device CA, within its dates by the wall
 * clock, an end-entity certificate for clientAuth. Then the same lookup as a handshake's.
 */
function forwardedCertificate(deviceCa: DeviceCa | null, header: string, value: string): Presented {
  if (!deviceCa) throw unauthenticated("client certificate refused: this server signs no device certificates (it needs DROVER_TLS=auto or proxy)");
  let cert: X509Certificate;
  try {
    // RFC 9440's Client-Cert is a structured-field byte sequence, `:<base64 DER>:`; nginx and Envoy send URL-escaped PEM.
    const der = /^:([A-Za-z0-9+/=]+):$/.exec(value)?.[1];
    cert = new X509Certificate(der ? Buffer.from(der, "base64") : decodeURIComponent(value));
  } catch {
    throw unauthenticated(`client certificate refused: the ${header} header from the proxy holds no certificate (URL-escaped PEM, or RFC 9440's :base64 DER:)`);
  }
  if (caCache?.pem !== deviceCa.ca.certPem) caCache = { pem: deviceCa.ca.certPem, x509: new X509Certificate(deviceCa.ca.certPem) };
  const ca = caCache.x509;
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) throw unauthenticated(refusal("CERT_SIGNATURE_FAILURE"));
  const now = Date.now();
  if (now < Date.parse(cert.validFrom)) throw unauthenticated(refusal("CERT_NOT_YET_VALID"));
  if (now > Date.parse(cert.validTo)) throw unauthenticated(refusal("CERT_HAS_EXPIRED"));
  // Node 20 calls the extended key usages keyUsage; undefined when the certificate has none (any use, as OpenSSL reads it).
  if (cert.ca || (cert.keyUsage !== undefined && !cert.keyUsage.includes(CLIENT_AUTH))) throw unauthenticated(refusal("INVALID_PURPOSE"));
  return { fingerprint: createHash("sha256").update(cert.raw).digest("hex"), deviceId: namedDevice(cert.subjectAltName) };
}

export const REVOKED = "credential revoked: the device was decommissioned";
/** Issue 23: revoked by an operator (POST /api/v1/devices/{name}/revoke), not by a decommission: said apart, so an operator reading the agent's log knows which. */
export const REVOKED_BY_OPERATOR = "credential revoked by an operator: this device's certificate and token are refused (it was not decommissioned)";

/** The refusal for a revoked credential: a decommission's or an operator's. */
export function revokedMessage(device: { decommissionRequestedAt: Date | null }): string {
  return device.decommissionRequestedAt !== null ? REVOKED : REVOKED_BY_OPERATOR;
}

/** The same refusal for a device known only by its id (rare: one more read to say whose revocation it was). */
export async function revokedRefusal(ctx: Pick<ServerContext, "db">, deviceId: string): Promise<AppError> {
  const row = await ctx.db.device.findUnique({ where: { id: deviceId }, select: { decommissionRequestedAt: true } });
  return unauthenticated(row ? revokedMessage(row) : REVOKED);
}

/**
 * The device a verified certificate belongs to: the one it names, when it is the certificate
 * last issued to it (or the one its renewal was asked over, until the new one is first used:
 * that first use retires it).
 */
export async function deviceByCertificate(ctx: ServerContext, presented: Presented): Promise<DeviceWithCredential> {
  if (!presented.deviceId) throw unauthenticated("client certificate refused: it names no device (urn:drover:device:<id>)");
  const fingerprint = presented.fingerprint;
  // The agent store's prepared read (every request a device makes comes here), not Prisma's.
  const found = await ctx.fast.deviceByCertificate(fingerprint);
  if (!found) throw unauthenticated("client certificate refused: not the certificate this server last issued to the device it names (renewed since, or never issued)");
  const { certFingerprint, certPreviousFingerprint, ...device } = found;
  if (device.id !== presented.deviceId) throw unauthenticated("client certificate refused: it names another device than the one it was issued to");
  if (device.credentialRevokedAt) throw unauthenticated(revokedMessage(device));
  // The renewed certificate in use: the one it replaced stops working (guarded: a renewal meanwhile keeps its own).
  if (certFingerprint === fingerprint && certPreviousFingerprint !== null) {
    await ctx.db.device.updateMany({ where: { id: device.id, certFingerprint: fingerprint }, data: { certPreviousFingerprint: null } });
  }
  return device;
}

/**
 * `POST /certificate`: a new certificate for the device's (new or same) key. The one the request
 * came over stays accepted until the new one is first used, so an answer lost on its way costs
 * the device nothing (it asks again over the old one); any older one is refused from the commit.
 * A device revoked meanwhile gets none (its row's guard).
 */
export async function renewDeviceCertificate(
  ctx: ServerContext,
  device: { id: string; name: string },
  csrPem: string,
  /** The certificate the request came over (null: a token's), accepted until the new one is used. */
  over: string | null,
): Promise<IssuedClientCertificate> {
  const issued = await signDeviceCertificate(ctx, device, csrPem);
  const { count } = await ctx.db.device.updateMany({ where: { id: device.id, credentialRevokedAt: null }, data: certificateColumns(issued, over) });
  if (count !== 1) throw await revokedRefusal(ctx, device.id);
  return issued;
}
