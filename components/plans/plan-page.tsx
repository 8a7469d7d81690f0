"use client";

import { Link } from "@/components/ui/link";
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { isTerminalPlanState, planMachine, type PlanView } from "@/lib/plan-status";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { Skeleton } from "../ui/skeleton";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { RelativeTime } from "../ui/time";
import { ObjectEventsCard } from "../events/object-events-card";
import { Actor } from "../events/object-link";
import { CommandCard } from "./command-card";
import { PlanControls } from "./plan-controls";
import { DiagramButton } from "../state-diagram/diagram-button";
import { toneOf } from "../status/tones";
import { planDiagramSpec } from "./plan-diagrams";
import { PlanSummary } from "./plan-summary";
import { PlanStateChip } from "./plan-state-chip";
import { commandNotRun, defaultCommand, focusNode, nodeRows, planTitle, specIdOf } from "./plan-view";
import { planStateTone } from "./tones";

const breadcrumb = (
  <Link href="/plans" className="hover:text-slate-800 hover:underline">
    ← Plans
  </Link>
);

/** What the operator has chosen to look at: one node of a command (its row is marked, its diagram lit). */
interface Focus {
  command: number | null;
  node: string | null;
}

function PlanBody({ plan, canOperate }: { plan: PlanView; canOperate: boolean }) {
  const trpc = useTRPC();
  const events = useQuery(trpc.plans.events.queryOptions({ id: plan.metadata.id, limit: 30 }));
  const [focus, setFocus] = useState<Focus>({ command: null, node: null });
  // Follow the active command until the operator picks one.
  const commandIndex = focus.command ?? defaultCommand(plan);
  const command = commandIndex === null ? null : (plan.status.commands[commandIndex] ?? null);
  const rows = useMemo(() => (command ? nodeRows(command) : []), [command]);
  const node = focusNode(rows, focus.command === commandIndex ? focus.node : null);
  const s = plan.status;
  const title = planTitle({ name: plan.metadata.name, specId: specIdOf(plan), id: plan.metadata.id });

  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            <span data-testid="plan-title">{title}</span>
            <PlanStateChip status={s} testId="plan-state" />
            <DiagramButton
              spec={planDiagramSpec}
              current={s.state}
              highlight={toneOf(planStateTone, s.state)}
              title="Plan state"
              description={planMachine.states[s.state].description}
              legend={{ notYetSupported: false }}
              testId="state-diagram-plan"
            />
          </span>
        }
        description={
          <>
            <span data-testid="plan-message">{s.message}</span>
            <span className="mt-0.5 block text-xs text-slate-500">
              Created by <Actor actor={plan.metadata.createdBy} /> <RelativeTime value={plan.metadata.creationTimestamp} />
              {plan.metadata.retryOf && (
                <>
                  {" "}
                  · retry of{" "}
                  <Link href={`/plans/${encodeURIComponent(plan.metadata.retryOf)}`} className="font-mono text-brand-700 hover:underline">
                    {plan.metadata.retryOf}
                  </Link>
                </>
              )}
            </span>
          </>
        }
        actions={
          <>
            <YamlButton object={plan} what={`plan ${plan.metadata.id}`} />
            {canOperate && <PlanControls plan={plan} />}
          </>
        }
      />
      <PlanSummary plan={plan} />
      <div className="mt-4 space-y-4" data-testid="plan-commands">
        {s.commands.map((c) => (
          <CommandCard
            key={c.id}
            skipFor={canOperate && !isTerminalPlanState(s.state) ? plan.metadata.id : null}
            command={c}
            active={s.activeCommand === c.id}
            notRun={commandNotRun(s.state, c.state)}
            focusedNode={c.id === commandIndex ? node : null}
            onFocusNode={(key) => setFocus({ command: c.id, node: key })}
          />
        ))}
      </div>
      <div className="mt-4">
        <ObjectEventsCard
          kind="Plan"
          name={plan.metadata.id}
          description="The latest changes of this plan, its commands and nodes, newest first."
          events={events}
          emptyTitle="No events for this plan yet"
        />
      </div>
    </>
  );
}

/** One plan: state and controls, its diagrams, each command with its nodes, its events; live. */
export function PlanPage({ id }: { id: string }) {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const plan = useQuery(trpc.plans.get.queryOptions({ id }));

  if (plan.isPending) return <DetailLoading title={<Skeleton className="h-6 w-48" />} breadcrumb={breadcrumb} />;
  if (plan.isError) {
    return (
      <DetailError
        title={`Plan ${id}`}
        breadcrumb={breadcrumb}
        error={plan.error}
        onRetry={() => void plan.refetch()}
        notFound={{
          title: `No plan with id “${id}”`,
          hint: (
            <>
              See <Link href="/plans" className="text-brand-700 hover:underline">all plans</Link>.
            </>
          ),
        }}
        errorTitle="Could not load this plan"
      />
    );
  }

  return <PlanBody plan={plan.data} canOperate={canOperate} />;
}
