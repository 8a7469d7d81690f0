/**
 * A device's inventory (issue 10) as `GET /devices/{name}` answers it; the whole answer is
 * `DeviceResponse` in server/rest/responses.ts.
 */
import { z } from "zod";
import { SystemFacts } from "../../lib/protocol";

const Percent = z.number().min(0).max(100).nullable();

export const DeviceInventoryDoc = z.object({
  system: SystemFacts.omit({ usage: true }).nullable().describe("Host facts as the agent last sent them in full (at its start, on a change, hourly); null until then"),
  systemAt: z.iso.datetime().nullable(),
  usage: SystemFacts.shape.usage.unwrap().nullable().describe("Usage as of the last report"),
  usageAt: z.iso.datetime().nullable(),
  history: z
    .array(z.object({ at: z.iso.datetime(), cpuPercent: Percent, memoryPercent: Percent, diskPercent: Percent }))
    .max(120)
    .describe("One sample a minute at most, oldest first, the last 120"),
});
