/**
 * Helpers for fleet tests and measurements: many enrolled devices written straight into the
 * database (with tokens, so they can poll), the way thousands of approvals would leave them,
 * without thousands of HTTP round trips.
 */
import { randomUUID } from "node:crypto";
import type { ServerContext } from "../../server/context";
import { sha256 } from "../../server/lib/crypto";

export interface BulkDevice {
  id: string;
  name: string;
  token: string;
  auth: { authorization: string };
}

/** `count` Enrolled devices named `<prefix>-<i>` with `labels`, each with its own token. */
export async function insertDevices(ctx: ServerContext, prefix: string, count: number, labels: Record<string, string>): Promise<BulkDevice[]> {
  const devices = Array.from({ length: count }, (_, i) => {
    const token = `drvd_${randomUUID()}${randomUUID()}`;
    return { id: randomUUID(), enrollmentId: randomUUID(), name: `${prefix}-${i}`, token, auth: { authorization: `Bearer ${token}` } };
  });
  const now = new Date();
  for (let i = 0; i < devices.length; i += 500) {
    const chunk = devices.slice(i, i + 500);
    await ctx.db.enrollmentRequest.createMany({
      data: chunk.map((d) => ({
        id: d.enrollmentId,
        deviceName: d.name,
        labels: JSON.stringify(labels),
        platform: "linux-amd64",
        role: "worker",
        agentVersion: "1.0.0",
        secretHash: sha256(d.token),
        status: "Approved",
        decidedBy: "test",
        decidedAt: now,
        tokenIssuedAt: now,
      })),
    });
    await ctx.db.device.createMany({
      data: chunk.map((d) => ({
        id: d.id,
        name: d.name,
        platform: "linux-amd64",
        role: "worker",
        agentVersion: "1.0.0",
        enrollmentId: d.enrollmentId,
        tokenHash: sha256(d.token),
        lifecycle: "Enrolled",
      })),
    });
    await ctx.db.deviceLabel.createMany({ data: chunk.flatMap((d) => Object.entries(labels).map(([key, value]) => ({ deviceId: d.id, key, value }))) });
  }
  return devices.map(({ id, name, token, auth }) => ({ id, name, token, auth }));
}
