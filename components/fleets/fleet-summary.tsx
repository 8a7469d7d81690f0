import { Link } from "@/components/ui/link";
import { Card, CardHeader } from "../ui/card";
import { Field } from "../ui/field";
import { LabelChips } from "../ui/label-chips";
import { AbsoluteTime } from "../ui/time";
import { Actor } from "../events/object-link";
import { CountsBar, CountsLegend, updateSegments } from "./counts-bar";
import type { Fleet } from "./types";

/** Selector expressions in the kubectl-ish form an operator types (`key In (a,b)`). */
function selectorText(selector: Fleet["spec"]["selector"]): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    if (e.operator === "Exists") parts.push(e.key);
    else if (e.operator === "DoesNotExist") parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator === "In" ? "in" : "notin"} (${(e.values ?? []).join(",")})`);
  }
  return parts.join(",") || "(every device)";
}

/** The fleet at a glance: members per update status, selector, template, who changed it. */
export function FleetSummary({ fleet }: { fleet: Fleet }) {
  const d = fleet.status.devices;
  const segments = updateSegments(d);
  const template = fleet.spec.template.spec;
  return (
    <Card data-testid="fleet-summary">
      <CardHeader
        title="Devices"
        description={`${d.total} member${d.total === 1 ? "" : "s"} by update status, against template version ${fleet.status.templateVersion}`}
        actions={
          <Link href={`/devices?fleet=${encodeURIComponent(fleet.metadata.name)}`} className="text-xs font-medium text-brand-700 hover:underline">
            Device list →
          </Link>
        }
      />
      <div className="space-y-2 px-4 py-3" data-testid="fleet-counts" data-total={d.total} data-up-to-date={d.upToDate}>
        <CountsBar segments={segments} total={d.total} className="h-2.5" />
        <CountsLegend segments={segments} />
      </div>
      <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2 border-t border-slate-100 px-4 py-3">
        <Field label="Selector">
          <code className="text-[12.5px]" title={selectorText(fleet.spec.selector)}>
            {selectorText(fleet.spec.selector)}
          </code>
        </Field>
        <Field label="Template">
          <span className="font-mono text-[12.5px]" data-testid="fleet-template-version-spec">
            {template.version}
          </span>
          <span className="text-xs text-slate-500">
            {" "}
            · {template.applications.length} application{template.applications.length === 1 ? "" : "s"}
            {template.artifact ? " · artifact" : ""}
          </span>
        </Field>
        <Field label="Rollout policy">
          {fleet.spec.rolloutPolicy ? (
            <span className="text-[13px]">
              {fleet.spec.rolloutPolicy.canary ? `canary ${String(fleet.spec.rolloutPolicy.canary.replicas)}` : "no canary"}
              {fleet.spec.rolloutPolicy.deviceSelection ? `, ${fleet.spec.rolloutPolicy.deviceSelection.sequence.length} batch(es)` : ""}, threshold {fleet.spec.rolloutPolicy.successThreshold}
            </span>
          ) : (
            <span className="text-slate-500">none: all at once</span>
          )}
        </Field>
        <Field label="Changed" wrap>
          <AbsoluteTime value={fleet.metadata.updatedAt} />{" "}
          {/* Its own line when the time leaves too little room, cut only when wider than the column. */}
          <span className="inline-block max-w-full truncate align-bottom" data-testid="fleet-changed-by">
            <span className="text-xs text-slate-500">by</span> <Actor actor={fleet.metadata.updatedBy} />
          </span>
        </Field>
      </dl>
      {Object.keys(fleet.metadata.labels).length > 0 && (
        <div className="border-t border-slate-100 px-4 py-3">
          <div className="mb-1.5 text-xs text-slate-500">Fleet labels</div>
          <LabelChips labels={fleet.metadata.labels} />
        </div>
      )}
    </Card>
  );
}
