"use client";

import type { ReactNode } from "react";
import type { EventRow } from "../trpc";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { TableRows } from "../ui/table-rows";
import { TableHeader } from "../ui/table-header";
import { Actor, ObjectLink } from "./object-link";

/** The event log as a table; `showObject` off on a page about one object. */
export function EventsTable({ events, showObject = true, empty, loadingRows = 8 }: { events: EventRow[] | undefined; showObject?: boolean; empty: ReactNode; loadingRows?: number }) {
  const headings = ["Time", ...(showObject ? ["Object"] : []), "Type", "Reason", "Message", "Actor"];
  const columns = headings.length;
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="events-table">
        <TableHeader columns={headings} />
        <tbody>
          <TableRows items={events} columns={columns} loadingRows={loadingRows} empty={empty}>
            {(e) => (
              <tr key={e.id} className="border-b border-slate-100 align-top hover:bg-slate-50/60" data-testid={`event-${e.id}`}>
                <td className="py-2 pr-3 pl-4 whitespace-nowrap text-slate-600">
                  <RelativeTime value={e.time} />
                  <div className="text-[11px] text-slate-500">
                    <AbsoluteTime value={e.time} />
                  </div>
                </td>
                {showObject && (
                  <td className="px-3 py-2">
                    {/* A block of bounded width: the inline link alone grows to its whole name
                        (an action's or a plan's id) and runs into the next column. */}
                    <div className="flex max-w-64" title={e.objectName}>
                      <ObjectLink kind={e.objectKind} name={e.objectName} />
                    </div>
                  </td>
                )}
                <td className="px-3 py-2 font-medium whitespace-nowrap text-slate-800">{e.type}</td>
                <td className="px-3 py-2 whitespace-nowrap text-slate-600">{e.reason || <span className="text-slate-300">—</span>}</td>
                <td className="max-w-md px-3 py-2 break-words text-slate-600">{e.message || <span className="text-slate-300">—</span>}</td>
                <td className="px-3 py-2">
                  <Actor actor={e.actor} />
                </td>
              </tr>
            )}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
