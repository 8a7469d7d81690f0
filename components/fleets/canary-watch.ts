/**
 * What the canary's automatic checks will do next, in words, from the engine's CanaryWatch
 * (lib/rollout.ts): how far each canary device is from the auto-pause and auto-fail thresholds.
 */
import type { CanaryDeviceWatch, CanaryWatch } from "@/lib/rollout";

const more = (n: number) => `${n} more restart${n === 1 ? "" : "s"}`;

/** How many more restarts of this device trip each check (null: that check is off). */
export function headroom(device: Pick<CanaryDeviceWatch, "restarts">, watch: Pick<CanaryWatch, "pauseAbove" | "failAbove">): { toPause: number | null; toFail: number | null } {
  const left = (above: number | null) => (above === null ? null : Math.max(0, above + 1 - device.restarts));
  return { toPause: left(watch.pauseAbove), toFail: left(watch.failAbove) };
}

/** One device's line: "2 more restarts pause the canary; 5 more restarts fail it and revert the fleet". */
export function deviceOutlook(device: CanaryDeviceWatch, watch: CanaryWatch, paused: boolean): string {
  const { toPause, toFail } = headroom(device, watch);
  const parts: string[] = [];
  if (toPause !== null && toPause > 0 && !paused) parts.push(`${more(toPause)} pause${toPause === 1 ? "s" : ""} the canary`);
  if (toFail !== null) parts.push(toFail > 0 ? `${more(toFail)} fail${toFail === 1 ? "s" : ""} it and revert${toFail === 1 ? "s" : ""} the fleet` : "over the auto-fail limit");
  else parts.push("auto-fail is off");
  return parts.join("; ");
}

/**
 * The sentence a paused canary's banner ends with: what happens if nobody acts. Auto-fail keeps
 * watching a paused canary (as ExtendedDaemonSet does); without it the pause holds until an
 * operator acts. (The canary timeout, when set, is shown beside it as a time.)
 */
export function pausedOutlook(watch: CanaryWatch, previousVersion: string | null): string {
  if (watch.failAbove === null) return "Auto-fail is off: the canary stays paused until an operator resumes, promotes or aborts it.";
  const back = previousVersion ? ` and revert the fleet to version ${previousVersion}` : "";
  const worst = watch.devices[0];
  const restarted = worst && worst.restarts > 0 ? `${worst.name} has restarted ${worst.restarts} time${worst.restarts === 1 ? "" : "s"}; ` : "";
  const left = worst ? (headroom(worst, watch).toFail ?? 0) : watch.failAbove + 1;
  return `Auto-fail keeps watching while paused: ${restarted}${more(left)} on one device fail${left === 1 ? "s" : ""} the canary${back}.`;
}
