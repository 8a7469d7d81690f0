import type { AgentTiming } from "../agent";

/** Agent timing for tests against the fake server: short waits and backoffs, same shape. */
export const FAST: Partial<AgentTiming> = {
  enrollWaitSeconds: 2,
  pollWaitSeconds: 2,
  retry: { baseMs: 20, capMs: 200 },
  denied: { baseMs: 100, capMs: 400 },
  heldWorkDelayMs: 300,
};
