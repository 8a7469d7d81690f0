"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { StatusBadge } from "../status/status-badge";
import { lifecycleTone, summaryTone } from "../status/tones";
import { ObjectEventsCard } from "../events/object-events-card";
import { DecommissionButton } from "./decommission-dialog";
import { RevokeCredentialButton } from "./revoke-dialog";
import { RevokedBadge } from "../devices/revoked-badge";
import { RelativeTime } from "../ui/time";
import { ResumeButton } from "./resume-button";
import { DerivedStatuses, DeviceInfo, ReportedStatus } from "./sections";
import { useHeartbeatInterval } from "../hooks/use-heartbeat-interval";
import { CreateActionButton } from "../actions/create-action-dialog";
import { NudgeButton } from "../actions/nudge-button";
import { DeviceActions } from "./device-actions";
import { InventoryCard } from "./inventory-card";
import { EditDeviceButton } from "./edit-device-dialog";

const breadcrumb = (
  <Link href="/devices" className="hover:text-slate-800 hover:underline">
    ← Devices
  </Link>
);

export function DevicePage({ name }: { name: string }) {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const heartbeat = useHeartbeatInterval();
  const device = useQuery(trpc.devices.get.queryOptions({ name }, { refetchInterval: heartbeat }));
  const events = useQuery(trpc.devices.events.queryOptions({ name, limit: 20 }));

  if (device.isPending) return <DetailLoading title={name} breadcrumb={breadcrumb} cards={4} lines={4} />;
  if (device.isError) {
    return (
      <DetailError
        title={name}
        breadcrumb={breadcrumb}
        error={device.error}
        onRetry={() => void device.refetch()}
        notFound={{
          title: `No device named “${name}”`,
          hint: (
            <>
              It may not be enrolled yet. Check <Link href="/enrollments" className="text-brand-700 hover:underline">pending enrollments</Link>.
            </>
          ),
        }}
        errorTitle="Could not load this device"
      />
    );
  }

  const d = device.data;
  const revoked = d.conditions.find((c) => c.type === "CredentialRevoked");
  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            {d.name}
            {d.alias && (
              <span className="text-base font-normal text-slate-500" data-testid="device-alias">
                {d.alias}
              </span>
            )}
            <StatusBadge table={summaryTone} state={d.summary} data-testid="device-summary" />
            <StatusBadge table={lifecycleTone} state={d.lifecycle} data-testid="device-lifecycle" />
            {d.credentialRevokedAt && d.lifecycle !== "Decommissioned" && <RevokedBadge at={d.credentialRevokedAt} testId="device-revoked-badge" />}
          </span>
        }
        description={`${d.role} · ${d.platform}`}
        actions={
          <>
            <YamlButton object={d} what={`device ${d.name}`} />
            {canOperate && (
            <>
              {/* A decommissioned device is a record: nothing left to edit or wake. */}
              {d.lifecycle !== "Decommissioned" && <EditDeviceButton name={d.name} alias={d.alias} labels={d.labels} />}
              {d.lifecycle !== "Decommissioned" && <NudgeButton kind="Device" name={d.name} testId="nudge-device" />}
              {d.lifecycle === "Enrolled" && !d.credentialRevokedAt && <CreateActionButton device={d.name} />}
              {d.summary === "ConflictPaused" && <ResumeButton name={d.name} />}
              {d.lifecycle !== "Decommissioned" && !d.credentialRevokedAt && <RevokeCredentialButton name={d.name} />}
              {d.lifecycle === "Enrolled" && <DecommissionButton name={d.name} revoked={d.credentialRevokedAt !== null} />}
            </>
          )}
          </>
        }
      />
      {d.summary === "ConflictPaused" && (
        <div className="mb-4 rounded-md bg-orange-50 px-4 py-3 text-sm text-orange-800 ring-1 ring-orange-600/20 ring-inset" role="status">
          This device reported a rendered version the server does not know. It is paused until an operator resumes it; nothing was overwritten.
        </div>
      )}
      {revoked && d.lifecycle !== "Decommissioned" && (
        <div className="mb-4 rounded-md bg-red-50 px-4 py-3 text-sm text-red-800 ring-1 ring-red-600/20 ring-inset" role="status" data-testid="device-revoked">
          This device&apos;s credential was revoked <RelativeTime value={revoked.lastTransitionTime ?? d.credentialRevokedAt!} /> ({revoked.message}): the server refuses its
          agent and offers it no work. Decommissioning it completes at once.
        </div>
      )}
      {d.lifecycle === "Decommissioned" && (
        <div className="mb-4 rounded-md bg-slate-50 px-4 py-3 text-sm text-slate-700 ring-1 ring-slate-600/20 ring-inset" role="status" data-testid="device-decommissioned">
          This device was decommissioned and its credential revoked: it no longer reports. Its statuses, applications and usage below are its last report, kept for the record.
        </div>
      )}
      <div className="grid gap-4 lg:grid-cols-2">
        <DeviceInfo device={d} />
        <DerivedStatuses device={d} />
      </div>
      <div className="mt-4">
        <ReportedStatus device={d} />
      </div>
      <div className="mt-4">
        <InventoryCard device={d} />
      </div>
      <div className="mt-4">
        <DeviceActions name={d.name} />
      </div>
      <div className="mt-6">
        <ObjectEventsCard
          kind="Device"
          name={d.name}
          description="The latest state changes of this device, newest first."
          events={events}
          emptyTitle="No events for this device yet"
        />
      </div>
    </>
  );
}
