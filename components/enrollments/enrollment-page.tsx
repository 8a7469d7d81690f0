"use client";

import { useState, type ReactNode } from "react";
import { Link } from "@/components/ui/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { enrollmentMachine } from "@/lib/enrollment-status";
import { errorMessage, useTRPC, type RouterOutputs } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { Card, CardHeader } from "../ui/card";
import { Field } from "../ui/field";
import { Button } from "../ui/button";
import { LabelChips } from "../ui/label-chips";
import { EmptyState, InlineError } from "../ui/states";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { enrollmentTone } from "../status/tones";
import { ObjectEventsCard } from "../events/object-events-card";
import { ApproveDialog } from "./approve-dialog";
import { DenyDialog } from "./deny-dialog";
import { formatBytes } from "./format";
import { EnrollmentTokenField } from "../enrollment-tokens/token-field";

type EnrollmentDetail = RouterOutputs["enrollments"]["get"];

const breadcrumb = (
  <Link href="/enrollments" className="hover:text-slate-800 hover:underline">
    ← Enrollments
  </Link>
);

/**
 * One enrollment request (issue 10): what the device says it is (requested labels, platform,
 * role, agent, host facts) and where it came from, to check it before deciding; the decision
 * with its history; Approve (with labels), Deny and Reopen as on the list.
 */
export function EnrollmentPage({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canOperate } = useMe();
  const enrollment = useQuery(trpc.enrollments.get.queryOptions({ id }));
  const name = enrollment.data?.deviceName;
  const events = useQuery({ ...trpc.events.list.queryOptions({ kind: "EnrollmentRequest", name: name ?? "", limit: 50 }), enabled: name !== undefined });
  const [dialog, setDialog] = useState<"approve" | "deny" | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const refresh = () => {
    void queryClient.invalidateQueries(trpc.enrollments.get.queryFilter({ id }));
    void queryClient.invalidateQueries(trpc.enrollments.list.pathFilter());
    void queryClient.invalidateQueries(trpc.events.list.pathFilter());
    void queryClient.invalidateQueries(trpc.devices.counts.pathFilter());
  };
  const settled = (text: string) => () => {
    setDialog(null);
    setNotice(text);
    refresh();
  };
  const approve = useMutation(trpc.enrollments.approve.mutationOptions({ onSuccess: settled("Approved: the device is enrolled."), onError: refresh }));
  const deny = useMutation(trpc.enrollments.deny.mutationOptions({ onSuccess: settled("Denied."), onError: refresh }));
  const reopen = useMutation(
    trpc.enrollments.reopen.mutationOptions({ onSuccess: settled("Reopened: the request is Pending again; its agent finds it so within 5 minutes."), onError: refresh }),
  );
  const busy = approve.isPending || deny.isPending || reopen.isPending;

  if (enrollment.isPending) return <DetailLoading title="Enrollment request" breadcrumb={breadcrumb} cards={3} lines={4} />;
  if (enrollment.isError) {
    return (
      <DetailError
        title="Enrollment request"
        breadcrumb={breadcrumb}
        error={enrollment.error}
        onRetry={() => void enrollment.refetch()}
        notFound={{ title: "No such enrollment request", hint: <Link href="/enrollments?status=All" className="text-brand-700 hover:underline">All enrollment requests</Link> }}
        errorTitle="Could not load this enrollment request"
      />
    );
  }

  const e = enrollment.data;
  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            <span className="truncate" data-testid="enrollment-name">
              {e.deviceName}
            </span>
            <StatusBadge table={enrollmentTone} state={e.status} data-testid="enrollment-status" />
          </span>
        }
        description={`Enrollment request · ${e.role} · ${e.platform} · agent ${e.agentVersion}`}
        actions={
          <>
            <YamlButton object={e} what={`enrollment request ${e.deviceName}`} />
            {e.status === "Approved" && (
              <Link href={`/devices/${encodeURIComponent(e.deviceName)}`} className="text-sm font-medium text-brand-700 hover:underline" data-testid="enrollment-device-link">
                Open device →
              </Link>
            )}
            {canOperate && e.status === "Pending" && (
              <>
                <Button
                  variant="primary"
                  data-testid="approve-enrollment"
                  disabled={busy}
                  onClick={() => {
                    approve.reset();
                    setNotice(null);
                    setDialog("approve");
                  }}
                >
                  Approve…
                </Button>
                <Button
                  data-testid="deny-enrollment"
                  disabled={busy}
                  onClick={() => {
                    deny.reset();
                    setNotice(null);
                    setDialog("deny");
                  }}
                >
                  Deny…
                </Button>
              </>
            )}
            {canOperate && e.status === "Denied" && (
              <Button
                data-testid="reopen-enrollment"
                disabled={busy}
                title="Revert the denial: the request is Pending again"
                onClick={() => {
                  setNotice(null);
                  reopen.mutate({ ids: [e.id] });
                }}
              >
                {reopen.isPending ? "Reopening…" : "Reopen"}
              </Button>
            )}
          </>
        }
      />

      {notice && (
        <div role="status" className="mb-4 rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-600/20 ring-inset" data-testid="enrollment-notice">
          {notice}
        </div>
      )}
      {reopen.isError && (
        <div className="mb-4">
          <InlineError>Reopening failed: {errorMessage(reopen.error)}</InlineError>
        </div>
      )}

      <div className="grid gap-4 lg:grid-cols-2">
        <RequestCard e={e} />
        <SeenCard e={e} />
      </div>
      <div className="mt-4">
        <HostCard e={e} />
      </div>
      <div className="mt-6">
        <ObjectEventsCard
          kind="EnrollmentRequest"
          name={e.deviceName}
          description="How this request moved: asked, decided, reopened. Newest first."
          events={events}
          emptyTitle="No events for this request yet"
        />
      </div>

      <ApproveDialog
        key={dialog === "approve" ? "approve-open" : "approve-closed"}
        open={dialog === "approve"}
        targets={[e]}
        pending={approve.isPending}
        error={approve.isError ? errorMessage(approve.error) : null}
        onCancel={() => setDialog(null)}
        onConfirm={(labels) => approve.mutate({ ids: [e.id], ...(Object.keys(labels).length ? { labels } : {}) })}
      />
      <DenyDialog
        key={dialog === "deny" ? "deny-open" : "deny-closed"}
        open={dialog === "deny"}
        names={[e.deviceName]}
        pending={deny.isPending}
        error={deny.isError ? errorMessage(deny.error) : null}
        onCancel={() => setDialog(null)}
        onConfirm={(reason) => deny.mutate({ ids: [e.id], ...(reason ? { reason } : {}) })}
      />
    </>
  );
}

function RequestCard({ e }: { e: EnrollmentDetail }) {
  const description = enrollmentMachine.states[e.status]?.description;
  return (
    <Card data-testid="enrollment-request">
      <CardHeader title="Request" description={description} />
      <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2 px-4 py-3">
        <Field label="Device name">{e.deviceName}</Field>
        <Field label="Platform">
          <code className="text-[13px]">{e.platform}</code>
        </Field>
        <Field label="Role">{e.role}</Field>
        <Field label="Agent version">
          <code className="text-[13px]">{e.agentVersion}</code>
        </Field>
        <Field label="Requested">
          <AbsoluteTime value={e.createdAt} />
        </Field>
        <Field label="Status">{e.status}</Field>
        <EnrollmentTokenField tokenId={e.tokenId} />
        {e.status !== "Pending" && (
          <>
            <Field label={e.status === "Approved" ? "Approved by" : "Denied by"}>{e.decidedBy?.replace(/^user:/, "") ?? "—"}</Field>
            <Field label="Decided">
              <RelativeTime value={e.decidedAt} never="—" />
            </Field>
          </>
        )}
      </dl>
      {e.reason && e.status !== "Pending" && (
        <p className="border-t border-slate-100 px-4 py-2 text-sm text-slate-600 italic" data-testid="enrollment-reason">
          “{e.reason}”
        </p>
      )}
      <div className="border-t border-slate-100 px-4 py-3" data-testid="enrollment-requested-labels">
        <div className="mb-1.5 text-xs text-slate-500">Labels it asked for</div>
        <LabelChips labels={e.labels} />
      </div>
      {e.approvedLabels && (
        <div className="border-t border-slate-100 px-4 py-3" data-testid="enrollment-approved-labels">
          <div className="mb-1.5 text-xs text-slate-500">Labels added at approval</div>
          <LabelChips labels={e.approvedLabels} />
        </div>
      )}
    </Card>
  );
}

function AddressLink({ address }: { address: string | null }) {
  if (!address) return <span className="text-slate-500">unknown</span>;
  return (
    <Link href={`/enrollments?status=All&address=${encodeURIComponent(address)}`} title={`Every request from ${address}`} className="font-mono text-[13px] text-brand-700 hover:underline">
      {address}
    </Link>
  );
}

function SeenCard({ e }: { e: EnrollmentDetail }) {
  const moved = e.lastSeenAddress !== null && e.clientAddress !== null && e.lastSeenAddress !== e.clientAddress;
  return (
    <Card data-testid="enrollment-seen">
      <CardHeader title="Seen from" description="The address the request first came from, and the agent's latest contact about it." />
      <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2 px-4 py-3">
        <Field label="First seen from">
          <span data-testid="enrollment-first-address">
            <AddressLink address={e.clientAddress} />
          </span>
        </Field>
        <Field label="First seen">
          <span data-testid="enrollment-first-seen">
            <AbsoluteTime value={e.firstSeenAt} />
          </span>
        </Field>
        <Field label="Last seen from">
          <span data-testid="enrollment-last-address">
            <AddressLink address={e.lastSeenAddress} />
          </span>
        </Field>
        <Field label="Last seen">
          <span data-testid="enrollment-last-seen">
            <RelativeTime value={e.lastSeenAt} />
          </span>
        </Field>
      </dl>
      {moved && (
        <p className="border-t border-slate-100 px-4 py-2 text-xs text-amber-800" role="note" data-testid="enrollment-address-moved">
          The agent now speaks from another address than the one it first came from.
        </p>
      )}
    </Card>
  );
}

function Fact({ label, children, testId }: { label: string; children: ReactNode; testId: string }) {
  return (
    <Field label={label}>
      <span data-testid={`fact-${testId}`}>{children ?? <span className="text-slate-500">not sent</span>}</span>
    </Field>
  );
}

function HostCard({ e }: { e: EnrollmentDetail }) {
  const s = e.system;
  return (
    <Card data-testid="enrollment-host">
      <CardHeader title="Host" description="What the agent read of its machine when it asked, as it sent it: check it before approving." />
      {!s ? (
        <EmptyState title="No host facts">The agent sent none with its request (an agent from before host facts, or one that could not read them).</EmptyState>
      ) : (
        <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2 px-4 py-3 md:grid-cols-3 xl:grid-cols-4">
          <Fact label="Hostname" testId="hostname">
            {s.hostname}
          </Fact>
          <Fact label="OS" testId="os">
            {s.os ? [s.os.name, s.os.version].filter(Boolean).join(" ") : undefined}
          </Fact>
          <Fact label="Kernel" testId="kernel">
            {s.kernel}
          </Fact>
          <Fact label="Architecture" testId="arch">
            {s.arch}
          </Fact>
          <Fact label="CPUs" testId="cpus">
            {s.cpus}
          </Fact>
          <Fact label="Memory" testId="memory">
            {s.usage?.memory ? formatBytes(s.usage.memory.totalBytes) : undefined}
          </Fact>
          <Fact label="Disk" testId="disk">
            {s.usage?.disk ? formatBytes(s.usage.disk.totalBytes) : undefined}
          </Fact>
          <Fact label="Booted" testId="boot">
            {s.bootTime ? (
              <>
                <AbsoluteTime value={s.bootTime} /> <span className="text-slate-500">(<RelativeTime value={s.bootTime} />)</span>
              </>
            ) : undefined}
          </Fact>
          {s.agent && (
            <Fact label="Agent" testId="agent">
              <code className="text-[13px]">{s.agent.version}</code>
              {s.agent.startedAt && (
                <span className="text-slate-500">
                  {" "}
                  · started <RelativeTime value={s.agent.startedAt} />
                </span>
              )}
            </Fact>
          )}
        </dl>
      )}
      {s && (
        <div className="border-t border-slate-100 px-4 py-3">
          <div className="mb-1.5 text-xs text-slate-500">Addresses on the machine</div>
          <div data-testid="fact-ips">
            {s.ips?.length ? (
              <span className="flex flex-wrap gap-1.5">
                {s.ips.map((ip) => (
                  <code key={ip} className="rounded bg-slate-100 px-1.5 py-0.5 text-[12px] text-slate-700">
                    {ip}
                  </code>
                ))}
              </span>
            ) : (
              <span className="text-sm text-slate-500">not sent</span>
            )}
          </div>
        </div>
      )}
    </Card>
  );
}
