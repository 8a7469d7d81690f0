/**
 * Devices identified by client certificates (issue 23). The server's CA (DROVER_TLS=auto only:
 * the one CA whose key the server holds) signs a short-lived certificate for the key a device
 * made (its CSR, at enrollment and at each renewal); the certificate names the device by
 * `urn:drover:device:<id>` and the device row keeps its SHA-256, serial and end. A request is
 * the device's when the TLS handshake presented a certificate that chains to the CA, is within
 * its dates, is the very one last issued to the device it names, and that device's credential
 * is not revoked: all checked on every request, so a decommission cuts a device off at its
 * next request, on any connection, not at its certificate's end.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { ServerContext } from "../context";
import { invalid, unauthenticated } from "../errors";
import { DEVICE_URI_PREFIX, type CertificateAuthority, type IssuedClientCertificate, type Signer } from "../tls/auto-ca";
import { InvalidCsr, verifiedCsr } from "../tls/signer";
import { deviceFactsSelect } from "./status";
import type { DeviceWithCredential } from "./agent-store";

export interface DeviceCa {
  ca: CertificateAuthority;
  signer: Signer;
}

export const NO_DEVICE_CA = "this server signs no device certificates (it needs DROVER_TLS=auto): enroll without a csr";

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

/** What the TLS layer's verification said, in words an operator reading an agent's log can act on. */
function refusal(code: string): string {
  const why =
    code === "CERT_HAS_EXPIRED"
      ? "it has expired (an agent renews it before its end; one offline past it enrolls again)"
      : code === "CERT_NOT_YET_VALID"
        ? "it is not valid yet (check the device's clock)"
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

/**
 * The client certificate of this request's connection, checked by the TLS layer against the
 * device CA: null when none was presented (a browser, a token, plain HTTP); throws 401 when one
 * was and does not verify (expired, another CA).
 */
export function presentedCertificate(req: IncomingMessage): Presented | null {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || typeof socket.getPeerCertificate !== "function") return null;
  const peer = socket.getPeerCertificate();
  // No certificate: Node answers an empty object.
  if (!peer || !peer.raw) return null;
  if (!socket.authorized) throw unauthenticated(refusal(String(socket.authorizationError ?? "not verified")));
  const uri = (peer.subjectaltname ?? "")
    .split(", ")
    .map((name) => /^URI:(.*)$/.exec(name)?.[1])
    .find((value) => value?.startsWith(DEVICE_URI_PREFIX));
  return { fingerprint: createHash("sha256").update(peer.raw).digest("hex"), deviceId: uri ? uri.slice(DEVICE_URI_PREFIX.length) : null };
}

export const REVOKED = "credential revoked: the device was decommissioned";

/**
 * The device a verified certificate belongs to: the one it names, when it is the certificate
 * last issued to it (or the one its renewal was asked over, until the new one is first used:
 * that first use retires it).
 */
export async function deviceByCertificate(ctx: ServerContext, presented: Presented): Promise<DeviceWithCredential> {
  if (!presented.deviceId) throw unauthenticated("client certificate refused: it names no device (urn:drover:device:<id>)");
  const fingerprint = presented.fingerprint;
  const found = await ctx.db.device.findFirst({
    where: { OR: [{ certFingerprint: fingerprint }, { certPreviousFingerprint: fingerprint }] },
    select: { ...deviceFactsSelect, credentialRevokedAt: true, certFingerprint: true, certPreviousFingerprint: true },
  });
  if (!found) throw unauthenticated("client certificate refused: not the certificate this server last issued to the device it names (renewed since, or never issued)");
  const { certFingerprint, certPreviousFingerprint, ...device } = found;
  if (device.id !== presented.deviceId) throw unauthenticated("client certificate refused: it names another device than the one it was issued to");
  if (device.credentialRevokedAt) throw unauthenticated(REVOKED);
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
  if (count !== 1) throw unauthenticated(REVOKED);
  return issued;
}
