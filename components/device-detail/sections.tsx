"use client";

import { AgentVersionText } from "../devices/agent-version";
import { Link } from "@/components/ui/link";
import { deviceStatusMachines, RESOURCE_NAMES } from "@/lib/device-status";
import type { DeviceDetail } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { LabelChips } from "../ui/label-chips";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { EmptyState } from "../ui/states";
import { Field } from "../ui/field";
import { ConditionList } from "../ui/condition-list";
import { StatusBadge } from "../status/status-badge";
import { toneOf } from "../status/tones";
import type { Tone } from "../ui/badge";
import { DiagramButton } from "../state-diagram/diagram-button";
import { deviceAxisSpecs, type AxisKey } from "./axis-specs";
import type { StateMachine } from "@/lib/state-machine";
import {
  applicationSummaryTone,
  applicationTone,
  decommissioningTone,
  lifecycleTone,
  resourceTone,
  summaryTone,
  updateStateTone,
  updatedTone,
} from "../status/tones";

export function DeviceInfo({ device }: { device: DeviceDetail }) {
  return (
    <Card>
      <CardHeader title="Device" />
      <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2 px-4 py-3">
        <Field label="Platform">
          <code className="text-[13px]">{device.platform}</code>
        </Field>
        <Field label="Role">{device.role}</Field>
        <Field label="Agent version">
          <AgentVersionText version={device.agentVersion} testId="device-agent-version" />
        </Field>
        <Field label="Last seen">
          <span data-testid="device-last-seen">
            <RelativeTime value={device.lastSeen} />
          </span>
        </Field>
        <Field label="Enrolled">
          <AbsoluteTime value={device.createdAt} />
        </Field>
        <Field label="Fleet">
          {device.fleet ? (
            <Link href={`/fleets/${encodeURIComponent(device.fleet)}`} className="text-brand-700 hover:underline" data-testid="device-fleet">
              {device.fleet}
            </Link>
          ) : (
            <span className="text-slate-500" data-testid="device-fleet">
              none
            </span>
          )}
          {device.fleetTemplateVersion && <span className="text-xs text-slate-500"> · at template v{device.fleetTemplateVersion}</span>}
        </Field>
        <Field label="Rendered version (service)">{device.renderedVersion}</Field>
        <Field label="Running version (reported)">{device.reported ? device.reported.config.renderedVersion : <span className="text-slate-500">not reported</span>}</Field>
        {device.templateVersion && <Field label="Template version">{device.templateVersion}</Field>}
        {device.decommissionRequestedAt && (
          <Field label="Decommission requested">
            <RelativeTime value={device.decommissionRequestedAt} />
            {device.decommissionRequestedBy && <span className="text-slate-500"> by {device.decommissionRequestedBy.replace(/^user:/, "")}</span>}
          </Field>
        )}
        {device.credentialRevokedAt && (
          <Field label="Credential revoked">
            <RelativeTime value={device.credentialRevokedAt} />
            {revokedBy(device.conditions) && <span className="text-slate-500"> · {revokedBy(device.conditions)}</span>}
          </Field>
        )}
      </dl>
      <div className="border-t border-slate-100 px-4 py-3">
        <div className="mb-1.5 text-xs text-slate-500">Labels</div>
        <LabelChips labels={device.labels} />
      </div>
    </Card>
  );
}

/** One status of a device, as the Derived status card shows it and its diagram draws it. */
interface Axis {
  key: AxisKey;
  /** The row's name, in an operator's words. */
  label: string;
  /** The diagram's title. */
  title: string;
  /** Where the API reports it: the row's tooltip. */
  field: string;
  tones: Record<string, Tone>;
  current: (d: DeviceDetail) => string | null;
  /** Said when the device has no such state. */
  none?: string;
}

const AXES: Axis[] = [
  { key: "summary", label: "Status", title: "Device status", field: "status.summary", tones: summaryTone, current: (d) => d.summary },
  { key: "updated", label: "Update", title: "Update status", field: "status.updated.status", tones: updatedTone, current: (d) => d.updatedStatus },
  { key: "updateState", label: "Update state", title: "Update state", field: "conditions.Updating.reason", tones: updateStateTone, current: (d) => d.updatingReason, none: "no update reported" },
  { key: "applicationSummary", label: "Applications", title: "Application status", field: "status.applicationSummary", tones: applicationSummaryTone, current: (d) => d.applicationSummary },
  { key: "lifecycle", label: "Lifecycle", title: "Lifecycle", field: "status.lifecycle", tones: lifecycleTone, current: (d) => d.lifecycle },
  { key: "decommissioning", label: "Decommissioning", title: "Decommissioning", field: "conditions.DeviceDecommissioning.reason", tones: decommissioningTone, current: (d) => d.decommissioning, none: "not requested" },
];

/**
 * Each status the server derives from the device's last report: its state as a chip, what that
 * state means, and its state table one click away (lib/device-status, the tables the server enforces).
 */
export function DerivedStatuses({ device }: { device: DeviceDetail }) {
  return (
    <Card>
      <CardHeader title="Derived status" description="What the server concludes from the device's last report." />
      <dl className="divide-y divide-slate-100">
        {AXES.map((axis) => {
          const current = axis.current(device);
          const machine = deviceStatusMachines[axis.key] as StateMachine<string>;
          const description = current ? machine.states[current]?.description : undefined;
          const info = axis.key === "updated" ? device.updatedInfo : null;
          return (
            // dt and dd straight inside the row (a <dl> allows one wrapping div, no more).
            <div key={axis.key} className="flex flex-wrap items-center justify-between gap-x-3 px-4 py-2" data-testid={`device-axis-${axis.key}`}>
              <dt className="text-sm text-slate-700" title={`${axis.field} in the API`}>
                {axis.label}
              </dt>
              <dd className="flex items-center gap-1">
                {current ? (
                  <StatusBadge table={axis.tones} state={current} data-testid={`device-status-${axis.key}`} title={description} />
                ) : (
                  <span className="text-xs text-slate-500">{axis.none}</span>
                )}
                <DiagramButton
                  spec={deviceAxisSpecs[axis.key]}
                  current={current}
                  highlight={toneOf(axis.tones, current)}
                  title={axis.title}
                  description={description ?? (current ? undefined : `Now: ${axis.none}.`)}
                  testId={`state-diagram-${axis.key}`}
                  iconOnly
                />
              </dd>
              {info && (
                <dd className="mt-1 basis-full text-xs text-amber-800" data-testid="device-updated-info">
                  {info}
                </dd>
              )}
            </div>
          );
        })}
      </dl>
      {device.decommissionInfo && <p className="border-t border-slate-100 px-4 py-2 text-xs text-slate-600">{device.decommissionInfo}</p>}
    </Card>
  );
}

export function ReportedStatus({ device }: { device: DeviceDetail }) {
  const reported = device.reported;
  return (
    <Card>
      <CardHeader title="Reported status" description={device.lifecycle === "Decommissioned" ? "Its last report, before it was decommissioned." : "As the agent last reported it."} />
      {!reported ? (
        <EmptyState title="No report yet">The agent has not sent a status report since enrolling.</EmptyState>
      ) : (
        <>
          <div className="grid grid-cols-3 gap-3 px-4 py-3">
            {RESOURCE_NAMES.map((r) => (
              <div key={r} className="rounded-md border border-slate-200 px-3 py-2">
                <div className="text-xs text-slate-500 uppercase">{r}</div>
                <div className="mt-1">
                  <StatusBadge table={resourceTone} state={reported.resources[r]} data-testid={`resource-${r}`} />
                </div>
              </div>
            ))}
          </div>
          <div className="border-t border-slate-100">
            <div className="px-4 pt-3 pb-1 text-xs font-medium text-slate-500">Applications</div>
            {reported.applications.length === 0 ? (
              <p className="px-4 pb-3 text-sm text-slate-500">No applications.</p>
            ) : (
              <table className="w-full text-sm" data-testid="applications-table">
                <thead className="text-left text-xs text-slate-500">
                  <tr>
                    <th className="px-4 py-1.5 font-medium">Name</th>
                    <th className="px-4 py-1.5 font-medium">Status</th>
                    <th className="px-4 py-1.5 text-right font-medium">Restarts</th>
                  </tr>
                </thead>
                <tbody>
                  {reported.applications.map((a) => (
                    <tr key={a.name} className="border-t border-slate-100">
                      <td className="px-4 py-1.5 font-mono text-[13px]">{a.name}</td>
                      <td className="px-4 py-1.5">
                        <StatusBadge table={applicationTone} state={a.status} />
                      </td>
                      <td className={`px-4 py-1.5 text-right tabular-nums ${a.restarts > 0 ? "font-medium text-amber-700" : "text-slate-600"}`}>{a.restarts}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        </>
      )}
      <Conditions conditions={device.conditions} />
    </Card>
  );
}

function Conditions({ conditions }: { conditions: DeviceDetail["conditions"] }) {
  return (
    <div className="border-t border-slate-100">
      <div className="px-4 pt-3 pb-1 text-xs font-medium text-slate-500">Conditions</div>
      <ConditionList conditions={conditions} tone={(c) => (c.status === "True" ? "blue" : c.status === "False" ? "gray" : "amber")} typeWidth="w-44" testId="conditions" />
    </div>
  );
}

/** The CredentialRevoked condition's "revoked by NAME: why" (issue 23), or null. */
function revokedBy(conditions: { type: string; message: string }[]): string | null {
  return conditions.find((c) => c.type === "CredentialRevoked")?.message ?? null;
}
