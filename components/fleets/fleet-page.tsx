"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { useHeartbeatInterval } from "../hooks/use-heartbeat-interval";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { Card, CardHeader } from "../ui/card";
import { Badge } from "../ui/badge";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { ObjectEventsCard } from "../events/object-events-card";
import { CanaryBanner, FleetConditions } from "./fleet-conditions";
import { DeleteFleetButton } from "./delete-fleet-button";
import { FleetEditor } from "./fleet-editor";
import { FleetMembers } from "./fleet-members";
import { FleetSummary } from "./fleet-summary";
import { RolloutCard } from "./rollout-card";
import { VersionHistory } from "./version-history";
import { conditionTone } from "./tones";
import { conditionOf, readRollout } from "./types";

const breadcrumb = (
  <Link href="/fleets" className="hover:text-slate-800 hover:underline">
    ← Fleets
  </Link>
);

export function FleetPage({ name }: { name: string }) {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const heartbeat = useHeartbeatInterval();
  // Live through events; the interval is a backstop for moves that write none (counts within a stage).
  const fleet = useQuery(trpc.fleets.get.queryOptions({ name }, { refetchInterval: heartbeat }));
  const events = useQuery(trpc.fleets.events.queryOptions({ name, limit: 30 }));

  if (fleet.isPending) return <DetailLoading title={name} breadcrumb={breadcrumb} />;
  if (fleet.isError) {
    return (
      <DetailError
        title={name}
        breadcrumb={breadcrumb}
        error={fleet.error}
        onRetry={() => void fleet.refetch()}
        notFound={{
          title: `No fleet named “${name}”`,
          hint: (
            <>
              It may have been deleted. See <Link href="/fleets" className="text-brand-700 hover:underline">all fleets</Link>.
            </>
          ),
        }}
        errorTitle="Could not load this fleet"
      />
    );
  }

  const f = fleet.data;
  const rollout = readRollout(f.status.rollout);
  const upToDate = conditionOf(f.status.conditions, "DevicesUpToDate");

  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            {f.metadata.name}
            <Badge tone="slate" dot={false} data-testid="fleet-template-version" title="The template version members should run now">
              template v{f.status.templateVersion}
            </Badge>
            {upToDate && (
              <Badge tone={conditionTone(upToDate.type, upToDate.status)} data-testid="fleet-up-to-date" title={upToDate.message}>
                {upToDate.reason}
              </Badge>
            )}
          </span>
        }
        description={`Created by ${f.metadata.createdBy.replace(/^user:/, "")} · generation ${f.metadata.generation}`}
        actions={
          <>
            <YamlButton object={f} what={`fleet ${f.metadata.name}`} />
            {canOperate && <DeleteFleetButton name={f.metadata.name} members={f.status.devices.total} />}
          </>
        }
      />
      <CanaryBanner conditions={f.status.conditions} rollout={rollout} />
      <div className="grid gap-4 lg:grid-cols-2">
        <FleetSummary fleet={f} />
        <FleetConditions conditions={f.status.conditions} />
      </div>
      <div className="mt-4">
        <RolloutCard fleet={f} rollout={rollout} canOperate={canOperate} />
      </div>
      <div className="mt-4">
        <Card data-testid="template-editor">
          <CardHeader
            title="Fleet and template"
            description={
              canOperate
                ? "Edit the YAML or the form; they stay in step. Save sends the whole fleet: a changed template becomes a new template version and rolls out."
                : "The fleet as YAML (read-only for viewers)."
            }
          />
          <div className="px-4 py-3">
            <FleetEditor fleet={f} readOnly={!canOperate} />
          </div>
        </Card>
      </div>
      <div className="mt-4">
        <VersionHistory name={f.metadata.name} />
      </div>
      <div className="mt-4">
        <FleetMembers name={f.metadata.name} total={f.status.devices.total} />
      </div>
      <div className="mt-4">
        <ObjectEventsCard
          kind="Fleet"
          name={f.metadata.name}
          description="The latest changes of this fleet and its rollouts, newest first."
          events={events}
          emptyTitle="No events for this fleet yet"
        />
      </div>
    </>
  );
}
