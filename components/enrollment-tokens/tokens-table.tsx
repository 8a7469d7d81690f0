"use client";

import type { ReactNode } from "react";
import { Badge } from "../ui/badge";
import { RelativeTime } from "../ui/time";
import { TableHeader, WIDE_ONLY } from "../ui/table-header";
import { TableRows } from "../ui/table-rows";
import { LabelChips } from "../ui/label-chips";
import { Button } from "../ui/button";
import { cx } from "../ui/cx";
import { enrollmentTokenTone, STATUS_TEXT, type EnrollmentToken } from "./types";

/** Tokens newest first; never the secret (the server does not have it), only its first characters. */
export function EnrollmentTokensTable({
  items,
  canRevoke,
  busy,
  onRevoke,
  empty,
}: {
  items: EnrollmentToken[] | undefined;
  canRevoke: boolean;
  busy: boolean;
  onRevoke: (t: EnrollmentToken) => void;
  empty: ReactNode;
}) {
  const columns = [
    "Name",
    "Token",
    "Labels",
    "Uses",
    "Expires",
    "Approval",
    "Status",
    { label: "Created", wide: true },
    ...(canRevoke ? [{ label: "Actions", align: "right" as const }] : []),
  ];
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="enrollment-tokens-table">
        <TableHeader columns={columns} />
        <tbody>
          <TableRows items={items} columns={columns.length} loadingRows={3} empty={empty}>
            {(t) => {
              const live = t.status === "Active";
              return (
                <tr key={t.id} data-testid={`enrollment-token-row-${t.id}`} className={cx("border-b border-slate-100 align-top hover:bg-slate-50/60", !live && "text-slate-500")}>
                  <td className="max-w-56 py-2.5 pr-3 pl-4">
                    <span className={cx("block truncate font-medium", live ? "text-slate-900" : "text-slate-500")} title={t.name}>
                      {t.name}
                    </span>
                    {t.description && <span className="block truncate text-xs text-slate-500">{t.description}</span>}
                  </td>
                  <td className="px-3 py-2.5 font-mono text-xs whitespace-nowrap text-slate-600">{t.prefix}…</td>
                  <td className="px-3 py-2.5">
                    <LabelChips labels={t.labels} max={4} />
                  </td>
                  <td className="px-3 py-2.5 whitespace-nowrap text-slate-600 tabular-nums" data-testid={`enrollment-token-uses-${t.id}`}>
                    {t.uses} / {t.maxUses ?? "∞"}
                  </td>
                  <td className="px-3 py-2.5 whitespace-nowrap text-slate-600">
                    <RelativeTime value={t.expiresAt} never="never" />
                  </td>
                  <td className="px-3 py-2.5 whitespace-nowrap text-slate-600">{t.autoApprove ? "at once" : "operator"}</td>
                  <td className="px-3 py-2.5">
                    <Badge tone={enrollmentTokenTone[t.status]} data-testid={`enrollment-token-status-${t.id}`}>
                      {STATUS_TEXT[t.status]}
                    </Badge>
                    {t.revokedAt && (
                      <div className="mt-0.5 text-xs whitespace-nowrap text-slate-500">
                        by {t.revokedBy?.replace(/^user:/, "") ?? "—"} · <RelativeTime value={t.revokedAt} />
                      </div>
                    )}
                  </td>
                  <td className={cx("px-3 py-2.5 whitespace-nowrap text-slate-600", WIDE_ONLY)}>
                    <RelativeTime value={t.createdAt} />
                    <div className="text-xs text-slate-500">by {t.createdBy.replace(/^user:/, "")}</div>
                  </td>
                  {canRevoke && (
                    <td className="px-3 py-2 pr-4 text-right whitespace-nowrap">
                      {t.status !== "Revoked" && (
                        <Button size="sm" variant="secondary" data-testid={`revoke-enrollment-token-${t.id}`} aria-label={`Revoke ${t.name}`} disabled={busy} onClick={() => onRevoke(t)}>
                          Revoke
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
