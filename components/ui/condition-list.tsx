import { Badge, type Tone } from "./badge";
import { cx } from "./cx";
import { RelativeTime } from "./time";

/** A Kubernetes-style condition, as devices and fleets report them. */
export interface ConditionRow {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string | null;
}

/**
 * Conditions, one a row: type, status (toned by `tone`), reason and message, and when it last
 * changed. Each row is `condition-<type>` with its status and reason as data attributes.
 */
export function ConditionList({
  conditions,
  tone,
  typeWidth = "w-40",
  testId,
}: {
  conditions: readonly ConditionRow[];
  tone: (c: ConditionRow) => Tone;
  /** The type column's width: wide enough for the longest type name the list shows. */
  typeWidth?: "w-40" | "w-44";
  testId?: string;
}) {
  return (
    <ul className="divide-y divide-slate-100" data-testid={testId}>
      {conditions.map((c) => (
        <li key={c.type} className="flex items-start gap-3 px-4 py-2 text-sm" data-testid={`condition-${c.type}`} data-status={c.status} data-reason={c.reason}>
          <span className={cx("shrink-0 font-medium text-slate-800", typeWidth)}>{c.type}</span>
          <Badge tone={tone(c)} dot={false}>
            {c.status}
          </Badge>
          <span className="min-w-0 flex-1">
            {c.reason && <span className="font-medium text-slate-700">{c.reason}</span>}
            {c.message && <span className="block text-xs break-words text-slate-500">{c.message}</span>}
          </span>
          <span className="shrink-0 text-xs text-slate-500">
            <RelativeTime value={c.lastTransitionTime} never="—" />
          </span>
        </li>
      ))}
    </ul>
  );
}
