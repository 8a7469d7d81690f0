"use client";

import { useMemo, useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { useIdempotencyKey } from "../hooks/use-idempotency-key";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";
import { YamlProblems, YamlTextarea } from "../ui/yaml-input";
import { cx } from "../ui/cx";
import { deadlineProblem, NEW_PLAN_YAML, parsePlanYaml } from "./plan-yaml";

/**
 * Import a plan: the seed's k0s YAML as is, or drover/v1. Validated as you type with the
 * server's own schema (lib/plan-spec's PlanInput), each problem at its line; Create stays off
 * until it is valid, and the server's own refusal shows too. On success, the plan's page.
 */
export function ImportPlanDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [text, setText] = useState(NEW_PLAN_YAML);
  const [requireApproval, setRequireApproval] = useState(true);
  const [deadline, setDeadline] = useState("");
  const parsed = useMemo(() => parsePlanYaml(text), [text]);
  const deadlineError = deadlineProblem(deadline);

  const { idempotencyKey, renew } = useIdempotencyKey();
  const create = useMutation(
    trpc.plans.create.mutationOptions({
      onSuccess: (plan) => {
        renew();
        queryClient.setQueryData(trpc.plans.get.queryKey({ id: plan.metadata.id }), plan);
        void queryClient.invalidateQueries(trpc.plans.list.pathFilter());
        onClose();
        router.push(`/plans/${encodeURIComponent(plan.metadata.id)}`);
      },
    }),
  );
  const valid = parsed.input !== null && deadlineError === null;
  const submit = () => {
    if (!valid) return;
    // The YAML as written (not the parsed defaults): the server validates what the operator wrote.
    create.mutate({ plan: parsed.value, requireApproval, ...(deadline.trim() ? { deadline: deadline.trim() } : {}), idempotencyKey });
  };

  return (
    <Dialog
      open={open}
      onClose={() => !create.isPending && onClose()}
      title="Import a plan"
      size="lg"
      data-testid="import-plan-dialog"
      footer={
        <>
          <Button onClick={onClose} disabled={create.isPending}>
            Cancel
          </Button>
          <Button variant="primary" onClick={submit} disabled={!valid || create.isPending} data-testid="create-plan">
            {create.isPending ? "Creating…" : "Create plan"}
          </Button>
        </>
      }
    >
      <div className="space-y-3">
        <p>
          A k0s Autopilot Plan (<code className="font-mono text-xs">apiVersion: autopilot.k0sproject.io/v1beta2</code>, commands <code className="font-mono text-xs">k0supdate</code>{" "}
          and <code className="font-mono text-xs">airgapupdate</code>) as is, or Drover&apos;s <code className="font-mono text-xs">drover/v1</code>, which adds the{" "}
          <code className="font-mono text-xs">action</code> command. Commands run in order, controllers one at a time, then workers.
        </p>
        <YamlTextarea
          value={text}
          onChange={(t) => {
            setText(t);
            create.reset();
          }}
          invalid={parsed.problems.length > 0}
          minRows={14}
          maxRows={26}
          testId="plan-yaml"
          label="Plan YAML"
        />
        <YamlProblems problems={parsed.problems} validText="Valid Plan object." testIdPrefix="plan" />
        <div className="flex flex-wrap items-start gap-x-6 gap-y-2">
          <label className="flex items-center gap-2 pt-1.5 text-sm text-slate-700">
            <input
              type="checkbox"
              checked={requireApproval}
              onChange={(e) => setRequireApproval(e.target.checked)}
              className="size-4 rounded border-slate-300 accent-brand-600"
              data-testid="plan-require-approval"
            />
            Require approval before any node is signalled
          </label>
          <label className="block">
            <span className="flex items-center gap-2 text-sm text-slate-700">
              Deadline <span className="text-slate-500">(optional)</span>
              <input
                value={deadline}
                onChange={(e) => setDeadline(e.target.value)}
                placeholder="e.g. 2h"
                maxLength={16}
                aria-invalid={deadlineError !== null}
                data-testid="plan-deadline"
                className={cx(
                  "h-8 w-28 rounded-md border-0 px-2 font-mono text-sm ring-1 ring-inset focus:ring-2 focus:outline-none",
                  deadlineError ? "ring-red-400 focus:ring-red-500" : "ring-slate-300 focus:ring-brand-500",
                )}
              />
            </span>
            <span className={cx("mt-0.5 block text-xs", deadlineError ? "text-red-700" : "text-slate-500")}>
              {deadlineError ?? "From creation; past it the plan ends DeadlineExceeded."}
            </span>
          </label>
        </div>
        {create.isError && <InlineError>{errorMessage(create.error)}</InlineError>}
      </div>
    </Dialog>
  );
}
