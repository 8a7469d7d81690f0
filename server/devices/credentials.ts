/**
 * Device credentials: issued once on enrollment approval, stored as a hash, good for their
 * own device only, revoked when the device is decommissioned or by an operator (lifecycle.ts
 * revokeCredential, issue 23), each refusal saying which.
 *
 * Between the operator's decommission request and the agent's decommissioning Completed or
 * Error report (which revokes it), the token still works, for the way out only:
 * `POST /status` (progress, the queue), `GET /work` (answers at once with `decommission: true`
 * and the cancels for actions it holds, never a new action: work.ts), and `PUT /actions/{id}`
 * for the actions it holds, NEW or RUNNING (finish or cancel them; a repeated report stays a
 * no-op). Anything else there is 403 "device is being decommissioned" (decideReport in
 * ../actions/report.ts).
 *
 * Issue 23: a client certificate the server's CA issued (certificates.ts) identifies the device
 * the same way, and comes first: a request over a connection that presented one is that
 * device's or refused, whatever its Authorization header says. Bearer tokens are accepted
 * while DROVER_DEVICE_TOKENS=accept (the default for one release) and refused with `refuse`.
 */
import type { IncomingMessage } from "node:http";
import type { ServerContext } from "../context";
import { unauthenticated } from "../errors";
import { sha256 } from "../lib/crypto";
import type { DeviceFactsRow } from "./status";
import { deviceByCertificate, presentedCertificate, revokedMessage, revokedRefusal } from "./certificates";

export const DEVICE_TOKEN_PREFIX = "drvd";

export type AuthenticatedDevice = DeviceFactsRow;

/** The device a certificate or token belongs to, by id and name only: for the long-poll and action reports. */
export async function authenticateDeviceIdentity(ctx: ServerContext, req: IncomingMessage): Promise<{ id: string; name: string }> {
  const presented = presentedCertificate(ctx, req);
  if (presented) {
    const device = await deviceByCertificate(ctx, presented);
    return { id: device.id, name: device.name };
  }
  const hash = bearerHash(ctx, req.headers.authorization);
  const device = await ctx.fast.deviceIdentityByTokenHash(hash);
  if (!device) throw unauthenticated("unknown token");
  if (device.revoked) throw await revokedRefusal(ctx, device.id);
  return { id: device.id, name: device.name };
}

function bearerHash(ctx: ServerContext, authorization: string | undefined): string {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (ctx.env.DROVER_DEVICE_TOKENS === "refuse") {
    throw unauthenticated(match ? TOKENS_REFUSED : "missing client certificate: this server identifies devices by certificate (DROVER_DEVICE_TOKENS=refuse)");
  }
  if (!match?.[1]) throw unauthenticated("missing bearer token");
  return sha256(match[1]);
}

export const TOKENS_REFUSED = "device tokens are refused here (DROVER_DEVICE_TOKENS=refuse): present the device's client certificate (enroll with a csr)";

export async function authenticateDevice(ctx: ServerContext, req: IncomingMessage): Promise<AuthenticatedDevice> {
  const presented = presentedCertificate(ctx, req);
  if (presented) return deviceByCertificate(ctx, presented);
  const hash = bearerHash(ctx, req.headers.authorization);
  const device = await ctx.fast.deviceByTokenHash(hash);
  if (!device) throw unauthenticated("unknown token");
  if (device.credentialRevokedAt) throw unauthenticated(revokedMessage(device));
  return device;
}
