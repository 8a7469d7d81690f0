"use client";

import { Link } from "@/components/ui/link";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { useIdempotencyKey } from "../hooks/use-idempotency-key";
import { PageHeader } from "../ui/page-header";
import { Card, CardHeader } from "../ui/card";
import { EmptyState, ErrorState } from "../ui/states";
import { CreateTokenForm } from "./create-token-form";
import { InstallCommand } from "./install-command";
import { ServerCaCard } from "./server-ca-card";
import { EnrollmentTokensTable } from "./tokens-table";
import { RevokeEnrollmentTokenDialog } from "./revoke-dialog";
import type { CreatedEnrollmentToken, EnrollmentToken } from "./types";

/**
 * "Add devices" (issue 12): make an enrollment token (labels, expiry, uses, approval at once or
 * not), then copy the one line that installs the agent with it; the tokens made so far, with
 * Revoke. The secret lives only in this page's state, from the create answer until Done or
 * leaving the page: the server keeps its hash.
 */
export function AddDevicesPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canOperate } = useMe();
  const list = useQuery(trpc.enrollmentTokens.list.queryOptions({ limit: 1000 }));
  const settings = useQuery(trpc.system.settings.queryOptions(undefined, { staleTime: 10 * 60_000 }));
  const caFingerprint = settings.data?.tls.caFingerprint ?? null;
  const [created, setCreated] = useState<CreatedEnrollmentToken | null>(null);
  const [target, setTarget] = useState<EnrollmentToken | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const refresh = () => {
    void queryClient.invalidateQueries(trpc.enrollmentTokens.list.pathFilter());
    void queryClient.invalidateQueries(trpc.events.list.pathFilter());
  };

  const { idempotencyKey, renew } = useIdempotencyKey();
  const create = useMutation(
    trpc.enrollmentTokens.create.mutationOptions({
      onSuccess: (t) => {
        renew();
        setNotice(null);
        setCreated(t);
      },
      onSettled: refresh,
    }),
  );
  const revoke = useMutation(
    trpc.enrollmentTokens.revoke.mutationOptions({
      onSuccess: (t) => {
        setNotice(`Revoked “${t.name}”: machines enrolling with it are refused from now on.`);
        setTarget(null);
      },
      // Either way the list may have moved (someone else revoked it first): read it again.
      onSettled: refresh,
    }),
  );

  return (
    <>
      <PageHeader
        title="Add devices"
        breadcrumb={
          <>
            <Link href="/devices" className="hover:underline">
              Devices
            </Link>{" "}
            / Add devices
          </>
        }
        description="Make an enrollment token, then run one command on each Linux machine: the agent installs, enrolls with the token's labels and, if you choose, is approved at once."
        actions={
          <Link href="/enrollments" className="text-sm font-medium text-brand-700 hover:underline">
            Enrollment requests
          </Link>
        }
      />
      {notice && (
        <div role="status" className="mb-3 flex items-center justify-between rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-600/20 ring-inset" data-testid="enrollment-token-notice">
          {notice}
          <button className="text-xs text-emerald-700 hover:underline" onClick={() => setNotice(null)}>
            Dismiss
          </button>
        </div>
      )}
      {created && (
        <InstallCommand
          created={created}
          // Shown only after a create in this browser, never server-rendered. The address this
          // console was reached at is the one the devices should use too.
          server={window.location.origin}
          caFingerprint={caFingerprint}
          onDone={() => {
            setCreated(null);
            create.reset();
          }}
        />
      )}
      {caFingerprint && <ServerCaCard fingerprint={caFingerprint} />}
      {canOperate ? (
        !created && (
          <Card className="mb-5">
            <CardHeader title="New enrollment token" description="Who may enroll, with which labels, until when." />
            <CreateTokenForm
              pending={create.isPending}
              error={create.isError ? errorMessage(create.error) : null}
              onCreate={(input) => create.mutate({ ...input, idempotencyKey })}
            />
          </Card>
        )
      ) : (
        <p className="mb-5 text-sm text-slate-500" data-testid="viewer-note">
          Making enrollment tokens needs the operator role. Machines can still ask to join without one; an operator approves them in Enrollments.
        </p>
      )}
      <Card>
        <CardHeader title="Enrollment tokens" description="Newest first. Only the first characters of each token are kept in the clear." />
        {list.isError ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load enrollment tokens" />
        ) : (
          <EnrollmentTokensTable
            items={list.data}
            canRevoke={canOperate}
            busy={revoke.isPending}
            onRevoke={(t) => {
              revoke.reset();
              setNotice(null);
              setTarget(t);
            }}
            empty={
              <EmptyState title="No enrollment tokens yet">
                Make one above, or with <code className="rounded bg-slate-100 px-1 text-slate-700">drover create enrollment-token</code>.
              </EmptyState>
            }
          />
        )}
      </Card>
      <RevokeEnrollmentTokenDialog
        token={target}
        pending={revoke.isPending}
        error={revoke.isError ? errorMessage(revoke.error) : null}
        onCancel={() => setTarget(null)}
        onConfirm={() => target && revoke.mutate({ id: target.id })}
      />
    </>
  );
}
