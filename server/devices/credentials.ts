/**
 * Device credentials: issued once on enrollment approval, stored as a hash, good for their
 * own device only, revoked when the device is decommissioned.
 *
 * Between the operator's decommission request and the agent's decommissioning Completed or
 * Error report (which revokes it), the token still works, for the way out only:
 * `POST /status` (progress, the queue), `GET /work` (answers at once with `decommission: true`
 * and the cancels for actions it holds, never a new action: work.ts), and `PUT /actions/{id}`
 * for the actions it holds, NEW or RUNNING (finish or cancel them; a repeated report stays a
 * no-op). Anything else there is 403 "device is being decommissioned" (decideReport in
 * ../actions/report.ts).
 */
import type { ServerContext } from "../context";
import { unauthenticated } from "../errors";
import { sha256 } from "../lib/crypto";
import type { DeviceFactsRow } from "./status";

export const DEVICE_TOKEN_PREFIX = "drvd";

export type AuthenticatedDevice = DeviceFactsRow;

/** The device a token belongs to, by id and name only: for the long-poll and action reports. */
export async function authenticateDeviceIdentity(ctx: ServerContext, authorization: string | undefined): Promise<{ id: string; name: string }> {
  const hash = bearerHash(authorization);
  const device = await ctx.fast.deviceIdentityByTokenHash(hash);
  if (!device) throw unauthenticated("unknown token");
  if (device.revoked) throw unauthenticated(REVOKED);
  return { id: device.id, name: device.name };
}

const REVOKED = "credential revoked: the device was decommissioned";

function bearerHash(authorization: string | undefined): string {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!match?.[1]) throw unauthenticated("missing bearer token");
  return sha256(match[1]);
}

export async function authenticateDevice(ctx: ServerContext, authorization: string | undefined): Promise<AuthenticatedDevice> {
  const hash = bearerHash(authorization);
  const device = await ctx.fast.deviceByTokenHash(hash);
  if (!device) throw unauthenticated("unknown token");
  if (device.credentialRevokedAt) throw unauthenticated(REVOKED);
  return device;
}
