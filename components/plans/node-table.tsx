"use client";

import { Link } from "@/components/ui/link";
import { Fragment, memo, useMemo, useState } from "react";
import { commandNodes, PLAN_NODE_STATES, type PlanCommandStatusView, type PlanNodeState, type PlanNodeView } from "@/lib/plan-status";
import type { PlanGroup } from "@/lib/plan-spec";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone } from "../status/tones";
import { TableHeader } from "../ui/table-header";
import { RelativeTime } from "../ui/time";
import { Button } from "../ui/button";
import { EmptyState } from "../ui/states";
import { cx } from "../ui/cx";
import { toneDot } from "../ui/badge";
import { shortId } from "../actions/format";
import { planNodeStateTone } from "./tones";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { ReasonDialog } from "../ui/reason-dialog";
import { nodeRows, visibleRows } from "./plan-view";

/** Rows drawn at first and added by each "Show more": a 1,000-node command stays quick to redraw. */
export const NODE_PAGE = 100;
const COLUMNS = ["Node", "Role", "State", "Message", "Last updated", "Action"];
const GROUP_LABEL: Record<PlanGroup, string> = { controllers: "Controllers", workers: "Workers" };

/** One node; redrawn only when what it shows changed (each refetch brings new objects). */
const NodeRow = memo(
  function NodeRow({ node, commandIndex, focused, onFocus, onSkip }: { node: PlanNodeView; commandIndex: number; focused: boolean; onFocus: () => void; onSkip?: (() => void) | undefined }) {
    return (
      <tr
        className={cx("cursor-pointer border-b border-slate-100 align-top hover:bg-slate-50", focused && "bg-brand-50/60")}
        data-testid={`node-row-${commandIndex}-${node.name}`}
        onClick={(e) => {
          if ((e.target as HTMLElement).closest("a,button")) return;
          onFocus();
        }}
        aria-selected={focused}
      >
        <td className="py-2 pr-3 pl-4">
          <Link prefetch={false} href={`/devices/${encodeURIComponent(node.name)}`} className="font-medium text-slate-900 hover:text-brand-700 hover:underline">
            {node.name}
          </Link>
          {node.deviceSummary && <div className="text-[11px] text-slate-500">{node.deviceSummary}</div>}
        </td>
        <td className="px-3 py-2 text-slate-600">
          {node.role ?? <span className="text-slate-500">—</span>}
          {node.platform && <div className="font-mono text-[11px] text-slate-500">{node.platform}</div>}
        </td>
        <td className="px-3 py-2">
          <StatusBadge table={planNodeStateTone} state={node.state} data-testid={`node-state-${commandIndex}-${node.name}`} />
        </td>
        <td className="max-w-md px-3 py-2 text-xs text-slate-600" data-testid={`node-message-${commandIndex}-${node.name}`}>
          {node.message || <span className="text-slate-300">—</span>}
        </td>
        <td className="px-3 py-2 text-slate-600">
          <RelativeTime value={node.lastUpdatedTimestamp} />
        </td>
        <td className="px-3 py-2 whitespace-nowrap">
          {node.actionId ? (
            <span className="inline-flex items-center gap-2">
              <Link prefetch={false} href={`/actions/${encodeURIComponent(node.actionId)}`} className="font-mono text-xs text-brand-700 hover:underline" title={node.actionId}>
                {shortId(node.actionId)}
              </Link>
              <StatusBadge table={actionStateTone} state={node.actionState} data-testid={`node-action-${commandIndex}-${node.name}`} />
            </span>
          ) : (
            <span className="text-xs text-slate-500">not signalled</span>
          )}
          {onSkip && (node.state === "SignalPending" || node.state === "SignalSent") && (
            <Button
              size="sm"
              variant="ghost"
              className="ml-2"
              onClick={onSkip}
              data-testid={`node-skip-${commandIndex}-${node.name}`}
              title="Move on without this node: it counts as done for its command, and an action it waits on is cancelled"
            >
              Skip
            </Button>
          )}
        </td>
      </tr>
    );
  },
  (a, b) =>
    a.focused === b.focused &&
    a.commandIndex === b.commandIndex &&
    a.node.name === b.node.name &&
    a.node.state === b.node.state &&
    a.node.message === b.node.message &&
    a.node.lastUpdatedTimestamp === b.node.lastUpdatedTimestamp &&
    a.node.role === b.node.role &&
    a.node.platform === b.node.platform &&
    a.node.actionId === b.node.actionId &&
    a.node.actionState === b.node.actionState &&
    a.node.deviceSummary === b.node.deviceSummary &&
    (a.onSkip === undefined) === (b.onSkip === undefined),
);

/** Skip one node with a required reason (issue 21): recorded on the node and in the plan's events. */
function SkipNodeDialog({ planId, command, node, onClose }: { planId: string; command: number; node: string; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const skip = useMutation(
    trpc.plans.skipNode.mutationOptions({
      onSuccess: (next) => {
        queryClient.setQueryData(trpc.plans.get.queryKey({ id: planId }), next);
        void queryClient.invalidateQueries(trpc.plans.events.queryFilter({ id: planId }));
        void queryClient.invalidateQueries(trpc.plans.list.pathFilter());
        onClose();
      },
    }),
  );
  return (
    <ReasonDialog
      open
      required
      keyboard
      pending={skip.isPending}
      error={skip.isError ? errorMessage(skip.error) : null}
      title={`Skip ${node}?`}
      onCancel={onClose}
      onConfirm={(reason) => skip.mutate({ id: planId, node, command, reason })}
      cancelLabel="Keep waiting"
      confirmLabel={skip.isPending ? "Skipping…" : "Skip node"}
      confirmVariant="primary"
      placeholder="Why the plan may go on without it, e.g. the disk is replaced next week"
      testIds={{ dialog: "skip-node-dialog", confirm: "confirm-skip-node", reason: "skip-node-reason" }}
    >
      <p>
        The plan goes on without <span className="font-medium">{node}</span>: the node counts as done for command {command}, and an action it waits on is cancelled (through
        its agent if it is running). The device is not updated by this plan; the reason is recorded.
      </p>
    </ReasonDialog>
  );
}

/** State chips with their counts: a click shows only that state (several may be chosen). */
function StateChips({ command, selected, onChange }: { command: PlanCommandStatusView; selected: PlanNodeState[]; onChange: (s: PlanNodeState[]) => void }) {
  return (
    <div className="flex flex-wrap items-center gap-1.5" data-testid={`node-filter-${command.id}`}>
      {PLAN_NODE_STATES.filter((s) => command.counts[s] > 0 || selected.includes(s)).map((s) => {
        const on = selected.includes(s);
        return (
          <button
            key={s}
            type="button"
            aria-pressed={on}
            onClick={() => onChange(on ? selected.filter((x) => x !== s) : [...selected, s])}
            data-testid={`node-filter-${command.id}-${s}`}
            className={cx(
              "inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs ring-1 ring-inset",
              on ? "bg-brand-50 font-medium text-brand-700 ring-brand-500/40" : "bg-white text-slate-600 ring-slate-200 hover:bg-slate-50",
            )}
          >
            <span aria-hidden className={cx("size-1.5 rounded-full", toneDot(planNodeStateTone[s]))} />
            {s}
            <span className="text-slate-500 tabular-nums">{command.counts[s].toLocaleString()}</span>
          </button>
        );
      })}
      {selected.length > 0 && (
        <button type="button" className="ml-1 text-xs font-medium text-brand-700 hover:underline" onClick={() => onChange([])}>
          All states
        </button>
      )}
    </div>
  );
}

/**
 * A command's nodes, controllers then workers, as the server reports them: live with the
 * plan's query. Shows NODE_PAGE rows and more on demand, filtered by state, so a 1,000-node
 * command redraws only the rows on screen.
 */
export function NodeTable({
  command,
  focused,
  onFocus,
  skipFor = null,
}: {
  command: PlanCommandStatusView;
  focused: string | null;
  onFocus: (key: string) => void;
  /** The plan's id when an operator may skip waiting nodes; null hides Skip. */
  skipFor?: string | null;
}) {
  const [states, setStates] = useState<PlanNodeState[]>([]);
  const [skipping, setSkipping] = useState<string | null>(null);
  const [limit, setLimit] = useState(NODE_PAGE);
  const all = useMemo(() => nodeRows(command), [command]);
  const { rows, matched } = useMemo(() => visibleRows(all, states, limit), [all, states, limit]);

  if (all.length === 0) return <EmptyState title="No nodes">This command has no nodes yet: they are discovered when the plan starts.</EmptyState>;

  return (
    <div>
      <div className="flex flex-wrap items-center justify-between gap-2 px-4 py-2">
        <StateChips
          command={command}
          selected={states}
          onChange={(s) => {
            setStates(s);
            setLimit(NODE_PAGE);
          }}
        />
        <span className="text-xs text-slate-500 tabular-nums" data-testid={`node-shown-${command.id}`}>
          {rows.length.toLocaleString()} of {matched.toLocaleString()}
          {states.length > 0 && ` (of ${all.length.toLocaleString()})`}
        </span>
      </div>
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm" data-testid={`node-table-${command.id}`}>
          <TableHeader columns={COLUMNS} />
          <tbody>
            {rows.map((r, i) => {
              const key = `${r.group}/${r.node.name}`;
              const groupStart = i === 0 || rows[i - 1]!.group !== r.group;
              return (
                <Fragment key={key}>
                  {groupStart && (
                    <tr className="border-b border-slate-100 bg-slate-50/70">
                      <td colSpan={COLUMNS.length} className="py-1 pl-4 text-[11px] font-medium tracking-wide text-slate-500 uppercase">
                        {GROUP_LABEL[r.group]} <span className="font-normal normal-case">({(commandNodes(command)[r.group]?.length ?? 0).toLocaleString()})</span>
                      </td>
                    </tr>
                  )}
                  <NodeRow
                    node={r.node}
                    commandIndex={command.id}
                    focused={focused === key}
                    onFocus={() => onFocus(key)}
                    onSkip={skipFor ? () => setSkipping(r.node.name) : undefined}
                  />
                </Fragment>
              );
            })}
            {rows.length === 0 && (
              <tr>
                <td colSpan={COLUMNS.length} className="px-4 py-6 text-center text-sm text-slate-500">
                  No node in {states.join(" or ")}.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {skipFor && skipping && <SkipNodeDialog planId={skipFor} command={command.id} node={skipping} onClose={() => setSkipping(null)} />}
      {matched > rows.length && (
        <div className="flex items-center justify-center gap-2 border-t border-slate-100 px-4 py-2">
          <Button size="sm" onClick={() => setLimit((n) => n + NODE_PAGE)} data-testid={`node-more-${command.id}`}>
            Show {Math.min(NODE_PAGE, matched - rows.length).toLocaleString()} more
          </Button>
          <Button size="sm" variant="ghost" onClick={() => setLimit(matched)}>
            Show all {matched.toLocaleString()}
          </Button>
        </div>
      )}
    </div>
  );
}
