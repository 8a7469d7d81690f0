"use client";

import type { ReactNode } from "react";
import { StatusBadge } from "../status/status-badge";
import { RelativeTime } from "../ui/time";
import { TableHeader } from "../ui/table-header";
import { TableRows } from "../ui/table-rows";
import { Button } from "../ui/button";
import { cx } from "../ui/cx";
import { tokenTone, type ApiToken } from "./types";

/** Tokens newest first. Only an Active token has a Revoke button; the hash never reaches here. */
export function TokensTable({
  items,
  showUser,
  busy,
  onRevoke,
  empty,
}: {
  items: ApiToken[] | undefined;
  /** Admins see everyone's tokens: say whose each one is. */
  showUser: boolean;
  busy: boolean;
  onRevoke: (t: ApiToken) => void;
  empty: ReactNode;
}) {
  const columns = ["Name", ...(showUser ? ["User"] : []), "Status", "Created", "Last used", "Expires", { label: "Actions", align: "right" as const }];
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="tokens-table">
        <TableHeader columns={columns} />
        <tbody>
          <TableRows items={items} columns={columns.length} loadingRows={4} empty={empty}>
            {(t) => (
              <tr key={t.id} data-testid={`token-row-${t.id}`} className={cx("border-b border-slate-100 align-top hover:bg-slate-50/60", t.status !== "Active" && "text-slate-500")}>
                <td className="py-2.5 pr-3 pl-4">
                  <span className={cx("font-medium", t.status === "Active" ? "text-slate-900" : "text-slate-500")}>{t.name ?? <span className="italic">unnamed</span>}</span>
                  <div className="font-mono text-[11px] text-slate-500">{t.id}</div>
                </td>
                {showUser && <td className="px-3 py-2.5">{t.username}</td>}
                <td className="px-3 py-2.5">
                  <StatusBadge table={tokenTone} state={t.status} data-testid={`token-status-${t.id}`} />
                  {t.revokedAt && (
                    <div className="mt-0.5 text-xs text-slate-500">
                      by {t.revokedBy?.replace(/^user:/, "") ?? "—"} · <RelativeTime value={t.revokedAt} />
                    </div>
                  )}
                </td>
                <td className="px-3 py-2.5 text-slate-600">
                  <RelativeTime value={t.createdAt} />
                </td>
                <td className="px-3 py-2.5 text-slate-600">
                  <RelativeTime value={t.lastUsedAt} />
                </td>
                <td className="px-3 py-2.5 text-slate-600">
                  <RelativeTime value={t.expiresAt} />
                </td>
                <td className="px-3 py-2 pr-4 text-right whitespace-nowrap">
                  {t.status === "Active" && (
                    <Button size="sm" variant="secondary" data-testid={`revoke-${t.id}`} disabled={busy} onClick={() => onRevoke(t)}>
                      Revoke
                    </Button>
                  )}
                </td>
              </tr>
            )}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
