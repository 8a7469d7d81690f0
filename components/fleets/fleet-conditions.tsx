import { Link } from "@/components/ui/link";
import { Card, CardHeader } from "../ui/card";
import { ConditionList } from "../ui/condition-list";
import { RelativeTime } from "../ui/time";
import { conditionTone } from "./tones";
import { pausedOutlook } from "./canary-watch";
import { conditionOf, type FleetCondition, type RolloutView } from "./types";

function DeviceLinks({ names }: { names: string[] }) {
  return (
    <span className="inline-flex flex-wrap gap-1.5">
      {names.map((n) => (
        <Link key={n} href={`/devices/${encodeURIComponent(n)}`} className="rounded bg-white/70 px-1.5 font-mono text-[12px] font-medium ring-1 ring-black/10 hover:underline" data-testid={`tripped-${n}`}>
          {n}
        </Link>
      ))}
    </span>
  );
}

/** CanaryPaused / CanaryFailed, when true, at the top of the fleet page with the devices that tripped them. */
export function CanaryBanner({ conditions, rollout }: { conditions: readonly FleetCondition[]; rollout: RolloutView | null }) {
  const failed = conditionOf(conditions, "CanaryFailed");
  const paused = conditionOf(conditions, "CanaryPaused");
  const c = failed?.status === "True" ? failed : paused?.status === "True" ? paused : null;
  if (!c) return null;
  const isFailed = c === failed;
  const devices = (isFailed ? rollout?.failure?.devices : rollout?.pause?.devices) ?? [];
  const watch = rollout?.progress?.find((s) => s.kind === "canary")?.watch;
  return (
    <div
      role="alert"
      data-testid={isFailed ? "canary-failed" : "canary-paused"}
      className={
        isFailed
          ? "mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-800 ring-1 ring-red-600/25 ring-inset"
          : "mb-4 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-600/30 ring-inset"
      }
    >
      <div className="flex flex-wrap items-baseline gap-x-2">
        <span className="font-semibold">{isFailed ? "Canary failed" : "Canary paused"}</span>
        <span className="font-mono text-xs">{c.reason}</span>
        <span className="text-xs opacity-70">
          <RelativeTime value={c.lastTransitionTime} />
        </span>
      </div>
      {c.message && <p className="mt-1">{c.message}</p>}
      {devices.length > 0 && (
        <p className="mt-1.5 flex flex-wrap items-center gap-2">
          <span className="text-xs">{isFailed ? "Devices that failed it:" : "Devices that tripped it:"}</span>
          <DeviceLinks names={devices} />
        </p>
      )}
      {isFailed && <p className="mt-1 text-xs">The fleet reverts to its previous template version; the canary devices get the previous spec back.</p>}
      {!isFailed && watch && (
        <p className="mt-1.5 text-xs font-medium" data-testid="canary-paused-outlook">
          {pausedOutlook(watch, rollout?.previousVersion ?? null)}
          {watch.failAbove !== null && watch.timeoutAt && (
            <>
              {" "}
              Its timeout fails it <RelativeTime value={watch.timeoutAt} />, paused or not.
            </>
          )}
        </p>
      )}
    </div>
  );
}

/** Every condition of the fleet (its own and its rollout's), each with its reason and message. */
export function FleetConditions({ conditions }: { conditions: readonly FleetCondition[] }) {
  return (
    <Card data-testid="fleet-conditions">
      <CardHeader title="Conditions" description="The fleet controller's (device counts, overlaps) and the rollout controller's (rollout, canary)." />
      {conditions.length === 0 ? (
        <p className="px-4 py-3 text-sm text-slate-500">No conditions yet.</p>
      ) : (
        <ConditionList conditions={conditions} tone={(c) => conditionTone(c.type, c.status)} />
      )}
    </Card>
  );
}
