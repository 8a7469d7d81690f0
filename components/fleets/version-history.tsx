"use client";

import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { ErrorState } from "../ui/states";
import { SkeletonRows } from "../ui/skeleton";
import { RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { Actor } from "../events/object-link";
import { cx } from "../ui/cx";
import { DiffView } from "./diff-view";
import { templateOutcomeTone } from "./tones";

/** Template versions, newest first; the selected one's diff against the version it replaced. */
export function VersionHistory({ name }: { name: string }) {
  const trpc = useTRPC();
  const versions = useQuery(trpc.fleets.templateVersions.queryOptions({ name, limit: 50 }));
  const [picked, setPicked] = useState<string | null>(null);
  const items = versions.data;
  // Until one is picked, the newest: a new version shows its diff as soon as it arrives.
  const selected = items?.find((v) => v.version === picked) ?? items?.[0];

  return (
    <Card data-testid="version-history">
      <CardHeader title="Template versions" description="Every template change is a new immutable version: who made it, when, what changed, and how its rollout ended." />
      {versions.isError ? (
        <ErrorState error={versions.error} onRetry={() => void versions.refetch()} title="Could not load the template versions" />
      ) : (
        <div className="grid lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
          <div className="max-h-[28rem] overflow-y-auto border-b border-slate-100 lg:border-r lg:border-b-0">
            <table className="w-full text-left text-sm">
              <tbody>
                {!items ? (
                  <SkeletonRows columns={3} rows={3} />
                ) : (
                  items.map((v) => (
                    <tr
                      key={v.version}
                      data-testid={`version-row-${v.version}`}
                      aria-selected={selected?.version === v.version}
                      onClick={() => setPicked(v.version)}
                      className={cx("cursor-pointer border-b border-slate-100 align-top", selected?.version === v.version ? "bg-brand-50/60" : "hover:bg-slate-50")}
                    >
                      <td className="py-2 pr-2 pl-4 whitespace-nowrap">
                        <button type="button" className="font-semibold text-slate-900 tabular-nums" onClick={() => setPicked(v.version)}>
                          v{v.version}
                        </button>
                        {v.current && <div className="text-[11px] font-medium text-brand-700">current</div>}
                      </td>
                      <td className="px-2 py-2 text-xs text-slate-600">
                        <Actor actor={v.author} />
                        <div className="text-slate-500">
                          <RelativeTime value={v.createdAt} />
                        </div>
                        <div className="font-mono text-[11px] text-slate-500">{v.spec.version}</div>
                      </td>
                      <td className="py-2 pr-4 pl-2 text-right">
                        <StatusBadge table={templateOutcomeTone} state={v.outcome} data-testid={`version-outcome-${v.version}`} title={v.outcomeMessage ?? undefined} />
                      </td>
                    </tr>
                  ))
                )}
              </tbody>
            </table>
          </div>
          <div className="min-w-0">
            {selected && (
              <>
                <div className="flex flex-wrap items-baseline justify-between gap-2 border-b border-slate-100 px-4 py-2 text-xs text-slate-500">
                  <span>
                    Diff of <span className="font-medium text-slate-800">v{selected.version}</span> against the version it replaced
                  </span>
                  {selected.outcomeMessage && <span className="text-slate-600">{selected.outcomeMessage}</span>}
                </div>
                <DiffView diff={selected.diff} testId={`version-diff-${selected.version}`} />
              </>
            )}
          </div>
        </div>
      )}
    </Card>
  );
}
