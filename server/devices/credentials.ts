/**
 * Device credentials: issued once on enrollment approval, stored as a hash, good for their
 * own device only, revoked when the device is decommissioned.
 */
import type { ServerContext } from "../context";
import { unauthenticated } from "../errors";
import { sha256 } from "../lib/crypto";
import { deviceFactsSelect, type DeviceFactsRow } from "./status";

export const DEVICE_TOKEN_PREFIX = "drvd";

export type AuthenticatedDevice = DeviceFactsRow;

export async function authenticateDevice(ctx: ServerContext, authorization: string | undefined): Promise<AuthenticatedDevice> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!match?.[1]) throw unauthenticated("missing bearer token");
  const hash = sha256(match[1]);
  const device = ctx.fast
    ? ctx.fast.deviceByTokenHash(hash)
    : await ctx.db.device.findUnique({ where: { tokenHash: hash }, select: { ...deviceFactsSelect, credentialRevokedAt: true } });
  if (!device) throw unauthenticated("unknown token");
  if (device.credentialRevokedAt) throw unauthenticated("credential revoked: the device was decommissioned");
  return device;
}
