"use client";

import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";
import { Badge } from "../ui/badge";
import { TableRows } from "../ui/table-rows";
import { TableHeader } from "../ui/table-header";
import { StatusBadge } from "../status/status-badge";
import { CountsBar, updateSegments } from "./counts-bar";
import { conditionTone, rolloutPhaseTone } from "./tones";
import { conditionOf, rolloutSummary, type FleetListItem } from "./types";
import { LinkRow } from "../ui/link-row";

const COLUMNS = ["Name", "Members", "Template version", "Update status", "Rollout"];

/** Fleets by name: members, template version, members per update status, rollout state. */
export function FleetsTable({ items, empty }: { items: FleetListItem[] | undefined; empty: ReactNode }) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="fleets-table">
        <TableHeader columns={COLUMNS} />
        <tbody>
          <TableRows items={items} columns={COLUMNS.length} loadingRows={4} empty={empty}>
            {(f) => {
              const name = f.metadata.name;
              const d = f.status.devices;
              const rollout = rolloutSummary(f);
              const upToDate = conditionOf(f.status.conditions, "DevicesUpToDate");
              return (
                <LinkRow
                  key={name}
                  href={`/fleets/${encodeURIComponent(name)}`}
                  data-testid={`fleet-row-${name}`}
                >
                  <td className="py-2.5 pr-3 pl-4">
                    <Link prefetch={false} href={`/fleets/${encodeURIComponent(name)}`} title={name} className="block max-w-64 truncate font-medium text-slate-900 hover:text-brand-700 hover:underline">
                      {name}
                    </Link>
                    <div className="font-mono text-[11px] text-slate-500">{f.spec.template.spec.version}</div>
                  </td>
                  <td className="px-3 py-2.5 text-slate-700 tabular-nums" data-testid={`fleet-members-${name}`}>
                    {d.total.toLocaleString()}
                  </td>
                  <td className="px-3 py-2.5 tabular-nums" data-testid={`fleet-version-${name}`}>
                    v{f.status.templateVersion}
                  </td>
                  <td className="w-56 px-3 py-2.5">
                    <CountsBar segments={updateSegments(d)} total={d.total} testId={`fleet-bar-${name}`} />
                    <div className="mt-1 text-[11px] text-slate-500 tabular-nums">
                      {d.upToDate}/{d.total} UpToDate
                      {d.updating > 0 && ` · ${d.updating} Updating`}
                      {d.outOfDate > 0 && ` · ${d.outOfDate} OutOfDate`}
                    </div>
                  </td>
                  <td className="px-3 py-2.5" data-testid={`fleet-rollout-${name}`}>
                    {rollout.phase ? (
                      <StatusBadge table={rolloutPhaseTone} state={rollout.text} title={rollout.title} />
                    ) : (
                      <Badge tone={upToDate ? conditionTone(upToDate.type, upToDate.status) : "gray"} title={rollout.title}>
                        {rollout.text}
                      </Badge>
                    )}
                    {rollout.ended && (
                      <div className="mt-1 text-[11px] text-slate-500" data-testid={`fleet-rollout-ended-${name}`}>
                        {rollout.ended}
                      </div>
                    )}
                  </td>
                </LinkRow>
              );
            }}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
