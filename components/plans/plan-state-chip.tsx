import type { PlanView } from "@/lib/plan-status";
import { Badge } from "../ui/badge";
import { StatusBadge } from "../status/status-badge";
import { planActivity } from "./plan-view";
import { planStateTone } from "./tones";

type Status = Pick<PlanView["status"], "state" | "approval" | "counts">;

/**
 * A plan's state as an operator reads it: what it is doing now ("Waiting for approval",
 * "Running on 3 nodes"), with the API's state name beside it; an ended plan by its state's name.
 */
export function PlanStateChip({ status, testId, title }: { status: Status; testId?: string; title?: string }) {
  const activity = planActivity(status.state, status.approval, status.counts);
  if (activity.tone === null) return <StatusBadge table={planStateTone} state={status.state} data-testid={testId} title={title} />;
  return (
    <span className="inline-flex flex-wrap items-center gap-1.5">
      <Badge tone={activity.tone} data-testid={testId} title={title}>
        {activity.text}
      </Badge>
      <code className="text-[11px] font-normal text-slate-500" title="The plan's state in the API">
        {status.state}
      </code>
    </span>
  );
}
