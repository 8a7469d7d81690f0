"use client";

import type { Enrollment } from "../trpc";
import { StatusBadge } from "../status/status-badge";
import { enrollmentTone } from "../status/tones";
import { LabelChips } from "../ui/label-chips";
import { RelativeTime } from "../ui/time";
import { TableHeader, WIDE_ONLY } from "../ui/table-header";
import { TableRows } from "../ui/table-rows";
import { Button } from "../ui/button";
import { cx } from "../ui/cx";
import { SelectAllHeader, SelectCheckbox } from "../ui/selection";
import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";

export function EnrollmentsTable({
  items,
  canOperate,
  selectable,
  selected,
  busy,
  onToggle,
  onToggleAll,
  onApprove,
  onDeny,
  onReopen,
  addressHref,
  empty,
}: {
  items: Enrollment[] | undefined;
  canOperate: boolean;
  /** Rows can be selected for the bulk bar: only where pending requests are listed (Pending, All). */
  selectable: boolean;
  selected: ReadonlySet<string>;
  busy: boolean;
  onToggle: (id: string) => void;
  onToggleAll: (ids: string[], select: boolean) => void;
  onApprove: (e: Enrollment) => void;
  onDeny: (e: Enrollment) => void;
  /** Revert a denial: the request is Pending again. */
  onReopen: (e: Enrollment) => void;
  /** Where clicking a client address goes: the list narrowed to that address. */
  addressHref: (address: string) => string;
  empty: ReactNode;
}) {
  const pendingIds = (items ?? []).filter((e) => e.status === "Pending").map((e) => e.id);
  const columns = 8 + (selectable ? 1 : 0) + (canOperate ? 1 : 0);
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="enrollments-table">
        <TableHeader
          leading={selectable && <SelectAllHeader ids={pendingIds} selected={selected} onToggleAll={onToggleAll} label="Select all pending requests" testId="select-all" />}
          columns={["Device", { label: "Host", wide: true }, { label: "Labels", wide: true }, { label: "Platform", wide: true }, "Address", "Requested", "Status", { label: "Decision", wide: true }, ...(canOperate ? [{ label: "Actions", align: "right" as const }] : [])]}
        />
        <tbody>
          <TableRows items={items} columns={columns} loadingRows={6} empty={empty}>
            {(e) => {
              const pending = e.status === "Pending";
              return (
                <tr key={e.id} data-testid={`enrollment-row-${e.deviceName}`} className={cx("border-b border-slate-100 align-top", selected.has(e.id) ? "bg-brand-50/60" : "hover:bg-slate-50/60")}>
                  {selectable && (
                    <td className="py-2.5 pl-4">
                      {pending && (
                        <SelectCheckbox label={`Select ${e.deviceName}`} testId={`select-${e.deviceName}`} checked={selected.has(e.id)} onChange={() => onToggle(e.id)} />
                      )}
                    </td>
                  )}
                  <td className={cx("py-2.5 pr-3", !selectable && "pl-4")}>
                    {/* The request's page: its host facts and where it came from, to check before deciding. */}
                    <Link
                      prefetch={false}
                      href={`/enrollments/${encodeURIComponent(e.id)}`}
                      title={`${e.deviceName}: host facts, address and history`}
                      className="block max-w-56 truncate font-medium text-brand-700 hover:underline"
                      data-testid={`enrollment-link-${e.deviceName}`}
                    >
                      {e.deviceName}
                    </Link>
                    <div className="text-xs text-slate-500">
                      {e.role} · agent {e.agentVersion}
                      {e.status === "Approved" && (
                        <>
                          {" · "}
                          <Link prefetch={false} href={`/devices/${encodeURIComponent(e.deviceName)}`} className="text-brand-700 underline" aria-label={`Device ${e.deviceName}`}>
                            device
                          </Link>
                        </>
                      )}
                    </div>
                  </td>
                  <td className={cx("px-3 py-2.5 text-xs text-slate-600", WIDE_ONLY)} data-testid={`enrollment-host-${e.deviceName}`}>
                    {e.system?.hostname || e.system?.arch ? (
                      <span className="block max-w-48 truncate" title={[e.system.hostname, e.system.arch].filter(Boolean).join(" · ")}>
                        {[e.system.hostname, e.system.arch].filter(Boolean).join(" · ")}
                      </span>
                    ) : (
                      <span className="text-slate-500">—</span>
                    )}
                  </td>
                  <td className={cx("max-w-80 px-3 py-2.5", WIDE_ONLY)}>
                    <LabelChips labels={e.labels} max={5} />
                  </td>
                  <td className={cx("px-3 py-2.5", WIDE_ONLY)}>
                    <code className="text-[13px] text-slate-700">{e.platform}</code>
                  </td>
                  <td className="px-3 py-2.5" data-testid={`enrollment-address-${e.deviceName}`}>
                    {e.clientAddress ? (
                      <Link prefetch={false} href={addressHref(e.clientAddress)} title={`Only requests from ${e.clientAddress}`} className="font-mono text-[13px] text-brand-700 hover:underline">
                        {e.clientAddress}
                      </Link>
                    ) : (
                      <span className="text-slate-500">—</span>
                    )}
                  </td>
                  <td className="px-3 py-2.5 whitespace-nowrap text-slate-600">
                    <RelativeTime value={e.createdAt} />
                  </td>
                  <td className="px-3 py-2.5">
                    <StatusBadge table={enrollmentTone} state={e.status} data-testid={`enrollment-status-${e.deviceName}`} />
                  </td>
                  <td className={cx("px-3 py-2.5 text-xs text-slate-600", WIDE_ONLY)}>
                    {pending ? (
                      <span className="text-slate-500">—</span>
                    ) : (
                      <>
                        <span>{e.decidedBy?.replace(/^user:/, "") ?? "—"}</span>
                        {e.decidedAt && (
                          <span className="text-slate-500">
                            {" "}
                            · <RelativeTime value={e.decidedAt} />
                          </span>
                        )}
                        {e.reason && <div className="mt-0.5 max-w-64 text-slate-500 italic">“{e.reason}”</div>}
                      </>
                    )}
                  </td>
                  {canOperate && (
                    <td className="px-3 py-2 pr-4 text-right whitespace-nowrap">
                      {pending && (
                        <span className="inline-flex gap-1.5">
                          <Button size="sm" variant="primary" data-testid={`approve-${e.deviceName}`} disabled={busy} onClick={() => onApprove(e)}>
                            Approve
                          </Button>
                          <Button size="sm" data-testid={`deny-${e.deviceName}`} disabled={busy} onClick={() => onDeny(e)}>
                            Deny
                          </Button>
                        </span>
                      )}
                      {e.status === "Denied" && (
                        <Button size="sm" data-testid={`reopen-${e.deviceName}`} disabled={busy} onClick={() => onReopen(e)} title="Revert the denial: the request is Pending again">
                          Reopen
                        </Button>
                      )}
                    </td>
                  )}
                </tr>
              );
            }}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
