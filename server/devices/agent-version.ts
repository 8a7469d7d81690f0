/**
 * The device's agent version after an upgrade (issue 12). `Device.agentVersion` is written at
 * enrollment; an agent that upgraded itself tells its new version in the full host facts of its
 * first heartbeat (`system.agent.version`, agent/system-facts.ts), which this writes to the
 * device, with an `AgentVersionChanged` event.
 *
 * Cost on the heartbeat path: nothing on reports without full facts (most of them: usage only);
 * on those with them (an agent's start, a change, hourly), nothing when this server already saw
 * that version for that device (kept in memory), else one read, and a write only when the
 * version changed.
 */
import { compareAgentVersions } from "../../lib/agent-version";
import type { SystemFacts } from "../../lib/protocol";
import type { ServerContext } from "../context";
import { publishEvents, recordEvents } from "../events/events";
import { topics } from "../bus";
import { transaction } from "../lib/transactions";

/** Per server context: the agent version last seen for each device id. */
const seen = new WeakMap<ServerContext, Map<string, string>>();

export async function noteAgentVersion(ctx: ServerContext, device: { id: string; name: string }, system: SystemFacts | undefined): Promise<void> {
  const version = system?.agent?.version;
  if (!version) return;
  let known = seen.get(ctx);
  if (!known) seen.set(ctx, (known = new Map()));
  if (known.get(device.id) === version) return;
  const row = await ctx.db.device.findUnique({ where: { id: device.id }, select: { agentVersion: true } });
  if (!row) return;
  if (row.agentVersion !== version) {
    const older = row.agentVersion;
    const events = await transaction(ctx.db, async (tx) => {
      await tx.device.update({ where: { id: device.id }, data: { agentVersion: version } });
      return recordEvents(tx, [
        {
          objectKind: "Device",
          objectName: device.name,
          type: "AgentVersionChanged",
          reason: compareAgentVersions(version, older) >= 0 ? "Upgraded" : "Downgraded",
          message: `agent ${older} → ${version}`,
          actor: `device:${device.name}`,
        },
      ]);
    });
    publishEvents(ctx, events);
    ctx.bus.publish(topics.device(device.id), { at: Date.now() });
  }
  known.set(device.id, version);
}
