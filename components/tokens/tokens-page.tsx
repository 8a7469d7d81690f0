"use client";

import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { Card } from "../ui/card";
import { EmptyState, ErrorState } from "../ui/states";
import { TokensTable } from "./tokens-table";
import { RevokeTokenDialog } from "./revoke-token-dialog";
import type { ApiToken } from "./types";

/**
 * Operator API tokens (for scripts and the CLI): your own, or everyone's for an admin, with
 * a Revoke button. The server decides who may revoke what; this page only offers it.
 */
export function TokensPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { me, isAdmin } = useMe();
  const list = useQuery(trpc.auth.tokens.queryOptions({ limit: 1000 }));
  const [target, setTarget] = useState<ApiToken | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const revoke = useMutation(
    trpc.auth.revokeToken.mutationOptions({
      onSuccess: (t) => {
        setNotice(`Revoked ${t.name ? `“${t.name}”` : t.id}${t.username !== me?.username ? ` of ${t.username}` : ""}.`);
        setTarget(null);
      },
      // Either way the list may have moved (someone else revoked it first): read it again.
      onSettled: () => {
        void queryClient.invalidateQueries(trpc.auth.tokens.pathFilter());
        void queryClient.invalidateQueries(trpc.events.list.pathFilter());
      },
    }),
  );

  return (
    <>
      <PageHeader
        title="API tokens"
        description={
          isAdmin
            ? "Every user's operator API tokens, used by scripts and the drover CLI. Revoking one refuses its next request."
            : "Your operator API tokens, used by scripts and the drover CLI. Revoking one refuses its next request."
        }
      />
      {notice && (
        <div role="status" className="mb-3 flex items-center justify-between rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-600/20 ring-inset" data-testid="token-notice">
          {notice}
          <button className="text-xs text-emerald-700 hover:underline" onClick={() => setNotice(null)}>
            Dismiss
          </button>
        </div>
      )}
      <Card>
        {list.isError ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load API tokens" />
        ) : (
          <TokensTable
            items={list.data}
            showUser={isAdmin}
            busy={revoke.isPending}
            onRevoke={(t) => {
              revoke.reset();
              setNotice(null);
              setTarget(t);
            }}
            empty={
              <EmptyState title="No API tokens">
                Create one with <code className="rounded bg-slate-100 px-1">drover login</code> or <code className="rounded bg-slate-100 px-1">POST /api/v1/auth/token</code>.
              </EmptyState>
            }
          />
        )}
      </Card>
      <RevokeTokenDialog
        token={target}
        pending={revoke.isPending}
        error={revoke.isError ? errorMessage(revoke.error) : null}
        onCancel={() => setTarget(null)}
        onConfirm={() => target && revoke.mutate({ id: target.id })}
      />
    </>
  );
}
