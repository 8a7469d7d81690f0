/**
 * Preloaded into agent processes under test (built for the run by tests/global-setup.ts:
 * `preload: [HEALTHY_HOST]`, i.e. `node --import healthy-host.mjs drover-agent.mjs ...`): the
 * host reads as healthy whatever the test machine's load, so the device is Online and the
 * server offers it actions (by default Online and Degraded, lib/health-policy.ts). health.ts reads os and
 * fs/promises through their module objects, which this patches.
 */
import os from "node:os";
import fs from "node:fs/promises";

os.loadavg = () => [0, 0, 0];
os.freemem = () => Math.floor(os.totalmem() / 2);
const statfs = fs.statfs.bind(fs);
fs.statfs = (async (path: string) => {
  const stats = await statfs(path);
  return { ...stats, bavail: Math.floor(stats.blocks / 2), bfree: Math.floor(stats.blocks / 2) };
}) as typeof fs.statfs;
