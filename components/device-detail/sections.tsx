"use client";

import type { ReactNode } from "react";
import { AgentVersionText } from "../devices/agent-version";
import { Link } from "@/components/ui/link";
import { RESOURCE_NAMES } from "@/lib/device-status";
import type { DeviceDetail } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { LabelChips } from "../ui/label-chips";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { EmptyState } from "../ui/states";
import { Field } from "../ui/field";
import { ConditionList } from "../ui/condition-list";
import { StatusBadge } from "../status/status-badge";
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
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 px-4 py-3">
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

export function DerivedStatuses({ device }: { device: DeviceDetail }) {
  const rows: { label: string; field: string; value: ReactNode; info?: string | null }[] = [
    { label: "Status", field: "status.summary", value: <StatusBadge table={summaryTone} state={device.summary} /> },
    {
      label: "Update",
      field: "status.updated.status",
      value: <StatusBadge table={updatedTone} state={device.updatedStatus} data-testid="device-updated" title={device.updatedInfo ?? undefined} />,
      info: device.updatedInfo,
    },
    {
      label: "Update state",
      field: "conditions.Updating.reason",
      value: device.updatingReason ? <StatusBadge table={updateStateTone} state={device.updatingReason} /> : <span className="text-xs text-slate-500">no update reported</span>,
    },
    { label: "Applications", field: "status.applicationSummary", value: <StatusBadge table={applicationSummaryTone} state={device.applicationSummary} /> },
    { label: "Lifecycle", field: "status.lifecycle", value: <StatusBadge table={lifecycleTone} state={device.lifecycle} /> },
    {
      label: "Decommissioning",
      field: "conditions.DeviceDecommissioning.reason",
      value: device.decommissioning ? <StatusBadge table={decommissioningTone} state={device.decommissioning} /> : <span className="text-xs text-slate-500">not requested</span>,
    },
  ];
  return (
    <Card>
      <CardHeader title="Derived status" description="What the server concludes from the device's last report." />
      <dl className="divide-y divide-slate-100">
        {rows.map((r) => (
          // dt and dd straight inside the row (a <dl> allows one wrapping div, no more).
          <div key={r.label} className="flex flex-wrap items-center justify-between gap-x-3 px-4 py-2">
            <dt className="text-sm text-slate-700">
              {r.label} <code className="ml-1 text-[11px] text-slate-600">{r.field}</code>
            </dt>
            <dd>{r.value}</dd>
            {r.info && (
              <dd className="mt-1 basis-full text-xs text-amber-800" data-testid="device-updated-info">
                {r.info}
              </dd>
            )}
          </div>
        ))}
      </dl>
      {device.decommissionInfo && <p className="border-t border-slate-100 px-4 py-2 text-xs text-slate-600">{device.decommissionInfo}</p>}
    </Card>
  );
}

export function ReportedStatus({ device }: { device: DeviceDetail }) {
  const reported = device.reported;
  return (
    <Card>
      <CardHeader title="Reported status" description="As the agent last reported it." />
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
