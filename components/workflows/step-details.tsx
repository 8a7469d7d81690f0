"use client";

import { Link } from "@/components/ui/link";
import type { WorkflowObject, WorkflowStepView } from "@/server/workflows/workflows";
import { StatusBadge } from "../status/status-badge";
import { RelativeTime } from "../ui/time";
import { Button } from "../ui/button";
import { stepPhaseTone, stepProgress } from "./run-graph";
import { StepTargets } from "./step-targets";
import { OutputGroups } from "../actions/output-groups";

function Row({ label, children, testId }: { label: string; children: React.ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[6.5rem_1fr] gap-2 py-1">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 break-words text-slate-800" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/** The side panel of a clicked step: phase, message, attempts, what it waits for, its targets (Skip / Retry for operators), its actions. */
export function StepDetails({ workflow, step, canOperate, onClose }: { workflow: WorkflowObject; step: string; canOperate: boolean; onClose: () => void }) {
  const view: WorkflowStepView | undefined = workflow.status.statuses[step];
  const spec = workflow.spec.steps[step];
  if (!spec) return null;
  return (
    <aside className="w-full shrink-0 border-t border-slate-100 p-4 text-xs lg:w-80 lg:border-t-0 lg:border-l" data-testid="step-details" data-step={step}>
      <div className="mb-2 flex items-center justify-between gap-2">
        <h3 className="truncate text-sm font-semibold text-slate-900">{step}</h3>
        <Button variant="ghost" size="sm" onClick={onClose} aria-label="Close step details">
          ✕
        </Button>
      </div>
      <dl>
        <Row label="Phase">
          <StatusBadge table={stepPhaseTone} state={view?.phase ?? "Pending"} data-testid="step-details-phase" />
        </Row>
        <Row label="Does">
          {spec.jobTemplate ? (
            <span className="font-mono">
              {spec.jobTemplate.kind} on{" "}
              {spec.jobTemplate.targets.devices
                ? `${spec.jobTemplate.targets.devices.length} device(s)`
                : `selector ${JSON.stringify(spec.jobTemplate.targets.selector)}`}
            </span>
          ) : (
            <Link className="text-brand-700 hover:underline" href={`/workflows/${encodeURIComponent(spec.externalRef!.name)}`}>
              workflow {spec.externalRef!.name}
              {view?.workflow?.run ? ` (run ${view.workflow.run})` : ""}
            </Link>
          )}
        </Row>
        {view && stepProgress(view) && <Row label="Progress">{stepProgress(view)}</Row>}
        {view?.message && <Row label="Message" testId="step-details-message">{view.message}</Row>}
        <Row label="Attempts">
          {view?.attempts ?? 0} of {view?.maxAttempts ?? 1}
          {view?.nextAttemptAt && (
            <span className="text-slate-500">
              {" "}
              · next <RelativeTime value={view.nextAttemptAt} />
            </span>
          )}
        </Row>
        {(spec.dependencies?.length ?? 0) > 0 && <Row label="Depends on">{spec.dependencies!.join(", ")}</Row>}
        {view && view.waitingFor.length > 0 && <Row label="Waiting for" testId="step-details-waiting">{view.waitingFor.join(", ")}</Row>}
        {spec.when && <Row label="When"><code>{spec.when}</code></Row>}
        {view?.startedAt && <Row label="Started"><RelativeTime value={view.startedAt} /></Row>}
        {view?.finishedAt && <Row label="Finished"><RelativeTime value={view.finishedAt} /></Row>}
        {spec.jobTemplate && view && view.attempts > 0 && (
          <Row label="Targets">
            <StepTargets workflow={workflow.metadata.name} step={step} canOperate={canOperate} />
          </Row>
        )}
        {spec.jobTemplate && view && view.attempts > 0 && (
          <Row label="Outputs" testId="step-outputs">
            <OutputGroups source={{ workflow: workflow.metadata.name, step }} compact />
          </Row>
        )}
        {view && view.actions.length > 0 && (
          <Row label="Actions">
            <ul className="max-h-48 space-y-0.5 overflow-y-auto" data-testid="step-details-actions">
              {view.actions.map((id) => (
                <li key={id}>
                  <Link href={`/actions/${encodeURIComponent(id)}`} className="font-mono text-brand-700 hover:underline">
                    {id}
                  </Link>
                </li>
              ))}
            </ul>
          </Row>
        )}
      </dl>
    </aside>
  );
}
