"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { BUILTIN_ACTION_KINDS } from "@/lib/action-status";
import { ActionKind } from "@/lib/protocol";
import { admittedSummaries, DEFAULT_HEALTH_POLICY, HEALTH_POLICIES, type HealthPolicy } from "@/lib/health-policy";
import { errorMessage, useTRPC } from "../trpc";
import { useDebouncedValue } from "../hooks/use-debounced-value";
import { useIdempotencyKey } from "../hooks/use-idempotency-key";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";
import { cx } from "../ui/cx";
import { selectorError } from "../devices/text-filters";
import { ARGS_EXAMPLES, parseArgs } from "./format";
import { actionsHref } from "./params";
import { TargetPreview } from "./target-preview";
import { DeviceNameInput } from "./device-name-input";

type TargetMode = "device" | "selector";
const OTHER = "__other__";

const field = "block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-inset focus:ring-2 focus:outline-none";
const ok = "ring-slate-300 focus:ring-brand-500";
const bad = "ring-red-400 focus:ring-red-500";

/** "New action" and its dialog; `device` pre-fills the target (the device page). */
export function CreateActionButton({ device, size = "md" }: { device?: string; size?: "sm" | "md" }) {
  const [open, setOpen] = useState(false);
  // A fresh form each time it opens.
  const [session, setSession] = useState(0);
  return (
    <>
      <Button
        variant="primary"
        size={size}
        data-testid="new-action"
        onClick={() => {
          setSession((n) => n + 1);
          setOpen(true);
        }}
      >
        New action…
      </Button>
      <CreateActionDialog key={session} open={open} onClose={() => setOpen(false)} device={device} />
    </>
  );
}

function CreateActionDialog({ open, onClose, device }: { open: boolean; onClose: () => void; device: string | undefined }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();

  const [mode, setMode] = useState<TargetMode>("device");
  const [deviceName, setDeviceName] = useState(device ?? "");
  const [selector, setSelector] = useState("");
  const [kindChoice, setKindChoice] = useState<string>(BUILTIN_ACTION_KINDS[0]);
  const [customKind, setCustomKind] = useState("");
  const [argsText, setArgsText] = useState("");
  const [requireApproval, setRequireApproval] = useState(false);
  const [expiresIn, setExpiresIn] = useState(0);
  const [healthPolicy, setHealthPolicy] = useState<HealthPolicy>(DEFAULT_HEALTH_POLICY);
  const [argsTouched, setArgsTouched] = useState(false);

  const kind = kindChoice === OTHER ? customKind.trim() : kindChoice;
  const kindCheck = ActionKind.safeParse(kind);
  const kindError = kind === "" ? "Name the kind of action." : kindCheck.success ? null : (kindCheck.error.issues[0]?.message ?? "invalid kind");
  const args = parseArgs(argsText);
  const selError = mode === "selector" && selector.trim() !== "" ? selectorError(selector) : null;

  // The preview follows what is typed once typing pauses (strings: a settled value compares equal).
  const typed = mode === "device" ? deviceName.trim() : selError ? "" : selector.trim();
  const typedKey = `${mode}:${typed}`;
  const settledKey = useDebouncedValue(typedKey, 300);
  const settled = settledKey === typedKey;
  const settledTarget = settledKey.slice(settledKey.indexOf(":") + 1);
  const previewKind = useDebouncedValue(kindError ? "" : kind, 300);
  // The args too: the preview says which agents would refuse this exec (their allow-lists).
  const previewArgs = useDebouncedValue(args.ok ? JSON.stringify(args.value) : "", 300);
  const previewInput = {
    ...(settledKey.startsWith("device:") ? { device: settledTarget } : { labelSelector: settledTarget }),
    ...(previewKind ? { kind: previewKind } : {}),
    ...(previewKind && previewArgs ? { args: JSON.parse(previewArgs) as Record<string, unknown> } : {}),
  };
  const preview = useQuery({
    ...trpc.actions.preview.queryOptions(previewInput),
    enabled: open && settledTarget !== "",
    staleTime: 5_000,
    retry: false,
    // A change of kind alone keeps the matched devices on screen (and Create enabled) while the
    // approval policy for the new kind loads; a change of target never shows the old target's devices.
    placeholderData: (previous, previousQuery) => (previous && sameTarget(previousQuery?.queryKey, previewInput) ? previous : undefined),
  });
  const settings = useQuery(trpc.system.settings.queryOptions(undefined, { staleTime: 10 * 60_000 }));

  // Server policy: the preview says so for the kind it saw; until then, the settings.
  const policyApproval =
    preview.data && !preview.isPlaceholderData && preview.data.needsApproval !== null && previewKind === kind ? preview.data.needsApproval : !kindError && (settings.data?.approvalKinds.includes(kind) ?? false);

  const { idempotencyKey, renew } = useIdempotencyKey();
  const create = useMutation(
    trpc.actions.create.mutationOptions({
      onSuccess: (created) => {
        renew();
        void queryClient.invalidateQueries(trpc.actions.list.pathFilter());
        void queryClient.invalidateQueries(trpc.actions.counts.pathFilter());
        onClose();
        const first = created[0];
        if (created.length === 1 && first) router.push(`/actions/${encodeURIComponent(first.id)}`);
        // Many devices: their request (issue 10), decided and followed as one.
        else if (first?.requestId) router.push(`/requests/${encodeURIComponent(first.requestId)}`);
        else router.push(mode === "device" ? actionsHref({ device: deviceName.trim(), kind }) : actionsHref({ selector: selector.trim(), kind }));
      },
    }),
  );

  const idle =
    mode === "device"
      ? deviceName.trim() === ""
        ? "Type a device name to check it."
        : null
      : selector.trim() === ""
        ? "Type a label selector, e.g. site=lab,role=worker, to see which devices match."
        : selError
          ? "Fix the selector to see which devices match."
          : null;

  const targetOk = settled && !preview.isError && (preview.data?.total ?? 0) > 0;
  const canSubmit = targetOk && !kindError && args.ok && !create.isPending;

  function submit() {
    if (!canSubmit || !args.ok) return;
    create.mutate({
      ...(mode === "device" ? { device: deviceName.trim() } : { labelSelector: selector.trim() }),
      kind,
      args: args.value,
      ...(requireApproval ? { requireApproval: true } : {}),
      ...(expiresIn ? { expiresInSeconds: expiresIn } : {}),
      ...(healthPolicy !== DEFAULT_HEALTH_POLICY ? { healthPolicy } : {}),
      idempotencyKey,
    });
  }

  const total = preview.data?.total ?? 0;
  const submitLabel = create.isPending
    ? "Creating…"
    : mode === "selector" && total > 1
      ? `Create ${total.toLocaleString()} actions`
      : "Create action";

  return (
    <Dialog
      open={open}
      size="lg"
      onClose={() => !create.isPending && onClose()}
      title="New action"
      data-testid="create-action-dialog"
      footer={
        <>
          <Button onClick={onClose} disabled={create.isPending}>
            Cancel
          </Button>
          <Button variant="primary" data-testid="create-action-submit" disabled={!canSubmit} onClick={submit}>
            {submitLabel}
          </Button>
        </>
      }
    >
      <form
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <fieldset>
          <legend className="mb-1.5 font-medium text-slate-800">Target</legend>
          <div className="mb-2 inline-flex rounded-md bg-slate-100 p-0.5" role="radiogroup" aria-label="Target">
            {(["device", "selector"] as const).map((m) => (
              <button
                key={m}
                type="button"
                role="radio"
                aria-checked={mode === m}
                data-testid={`target-mode-${m}`}
                onClick={() => setMode(m)}
                className={cx("rounded px-3 py-1 text-sm font-medium", mode === m ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900")}
              >
                {m === "device" ? "One device" : "Label selector"}
              </button>
            ))}
          </div>
          {mode === "device" ? (
            <DeviceNameInput value={deviceName} onChange={setDeviceName} />
          ) : (
            <div>
              <label htmlFor="action-selector" className="sr-only">
                Label selector
              </label>
              <input
                id="action-selector"
                data-testid="action-selector"
                autoFocus
                value={selector}
                onChange={(e) => setSelector(e.target.value)}
                placeholder="site=lab,env in (dev,test),!legacy"
                spellCheck={false}
                autoComplete="off"
                aria-invalid={selError !== null}
                className={cx(field, "font-mono text-[13px]", selError ? bad : ok)}
              />
              {selError && (
                <p className="mt-1 text-xs text-red-600" data-testid="selector-error">
                  Invalid selector: {selError}
                </p>
              )}
            </div>
          )}
          <div className="mt-2">
            <TargetPreview
              preview={settled ? preview.data : undefined}
              loading={preview.isFetching}
              error={settled && preview.isError ? preview.error : null}
              idle={idle}
              device={mode === "device" ? settledTarget : null}
            />
          </div>
        </fieldset>

        <div className="grid gap-3 sm:grid-cols-2">
          <label className="block">
            <span className="mb-1 block font-medium text-slate-800">Kind</span>
            <select
              data-testid="action-kind"
              value={kindChoice}
              onChange={(e) => setKindChoice(e.target.value)}
              className={cx(field, ok, "h-9 py-0")}
            >
              {BUILTIN_ACTION_KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
              <option value={OTHER}>other…</option>
            </select>
          </label>
          {kindChoice === OTHER && (
            <label className="block">
              <span className="mb-1 block font-medium text-slate-800">Custom kind</span>
              <input
                data-testid="action-kind-custom"
                autoFocus
                value={customKind}
                maxLength={64}
                onChange={(e) => setCustomKind(e.target.value)}
                placeholder="e.g. rotate-logs"
                spellCheck={false}
                autoComplete="off"
                aria-invalid={customKind !== "" && kindError !== null}
                className={cx(field, "h-9 font-mono text-[13px]", customKind !== "" && kindError ? bad : ok)}
              />
              {customKind !== "" && kindError && (
                <span className="mt-1 block text-xs text-red-600" data-testid="kind-error">
                  {kindError}
                </span>
              )}
            </label>
          )}
        </div>

        <label className="block">
          <span className="mb-1 flex items-baseline justify-between">
            <span className="font-medium text-slate-800">
              Args <span className="font-normal text-slate-500">(JSON object)</span>
            </span>
            {ARGS_EXAMPLES[kind] && ARGS_EXAMPLES[kind] !== "{}" && argsText.trim() === "" && (
              <button type="button" className="text-xs font-medium text-brand-700 hover:underline" onClick={() => setArgsText(ARGS_EXAMPLES[kind] ?? "")}>
                Use example
              </button>
            )}
          </span>
          <textarea
            data-testid="action-args"
            rows={4}
            value={argsText}
            onChange={(e) => setArgsText(e.target.value)}
            onBlur={() => setArgsTouched(true)}
            placeholder={ARGS_EXAMPLES[kind] ?? "{}"}
            spellCheck={false}
            aria-invalid={!args.ok}
            className={cx(field, "font-mono text-[13px]", !args.ok && (argsTouched || argsText.trim().length > 2) ? bad : ok)}
          />
          {!args.ok && (argsTouched || argsText.trim().length > 2) && (
            <span className="mt-1 block text-xs text-red-600" data-testid="args-error" role="alert">
              {args.error}
            </span>
          )}
        </label>

        <div className="space-y-2">
          <label className="flex items-start gap-2">
            <input
              type="checkbox"
              data-testid="require-approval"
              checked={requireApproval || policyApproval}
              disabled={policyApproval}
              onChange={(e) => setRequireApproval(e.target.checked)}
              className="mt-0.5 size-3.5 accent-brand-600"
            />
            <span>
              <span className="font-medium text-slate-800">Require approval</span>
              <span className="block text-xs text-slate-500">The action waits in PENDING_APPROVE until an operator approves it in Approvals.</span>
            </span>
          </label>
          {policyApproval && (
            <p className="rounded-md bg-violet-50 px-3 py-2 text-xs text-violet-800 ring-1 ring-violet-600/20 ring-inset" data-testid="approval-note">
              <code className="font-semibold">{kind}</code> needs approval by server policy: {mode === "selector" && total > 1 ? "these actions wait" : "the action waits"} in
              Approvals until an operator approves {mode === "selector" && total > 1 ? "them" : "it"}.
            </p>
          )}
        </div>

        <label className="block">
          <span className="font-medium text-slate-800">Expires</span>
          <span className="block text-xs text-slate-500">Not started by then (a device that stays offline, an approval that never comes), the action is cancelled.</span>
          <select data-testid="expires-in" value={expiresIn} onChange={(e) => setExpiresIn(Number(e.target.value))} className={cx(field, ok, "mt-1")}>
            {EXPIRY_CHOICES.map(([label, seconds]) => (
              <option key={seconds} value={seconds}>
                {label}
              </option>
            ))}
          </select>
        </label>

        <label className="block">
          <span className="font-medium text-slate-800">Send to devices that are</span>
          <span className="block text-xs text-slate-500">A device in another state keeps the action waiting until it is one of these; Offline devices never get it.</span>
          <select
            data-testid="health-policy"
            value={healthPolicy}
            onChange={(e) => setHealthPolicy(e.target.value as HealthPolicy)}
            className={cx(field, ok, "mt-1")}
          >
            {HEALTH_POLICIES.map((p) => (
              <option key={p} value={p}>
                {admittedSummaries(p)}
                {p === DEFAULT_HEALTH_POLICY ? " (default)" : ""}
              </option>
            ))}
          </select>
        </label>

        {settled && preview.data && preview.data.refusals.total > 0 && previewKind === kind && (
          <div className="rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-900 ring-1 ring-amber-600/25 ring-inset" role="alert" data-testid="refusal-warning">
            <p className="font-semibold">
              {preview.data.refusals.total === preview.data.total
                ? preview.data.total === 1
                  ? "This device will refuse it:"
                  : `All ${preview.data.total.toLocaleString()} devices will refuse it:`
                : `${preview.data.refusals.total.toLocaleString()} of ${preview.data.total.toLocaleString()} devices will refuse it:`}
            </p>
            <ul className="mt-1 list-disc pl-4">
              {preview.data.refusals.devices.slice(0, 3).map((d) => (
                <li key={d.name}>
                  <span className="font-medium">{d.name}</span>: {d.reason}
                </li>
              ))}
            </ul>
          </div>
        )}

        {create.isError && <InlineError>Could not create: {errorMessage(create.error)}</InlineError>}
        {/* Enter in a text field submits. */}
        <button type="submit" hidden />
      </form>
    </Dialog>
  );
}

const EXPIRY_CHOICES: [label: string, seconds: number][] = [
  ["Never", 0],
  ["in 10 minutes", 600],
  ["in 1 hour", 3600],
  ["in 24 hours", 86_400],
  ["in 7 days", 7 * 86_400],
];

/** Whether a cached preview query was for the same device or selector as `input` (kinds may differ). */
function sameTarget(queryKey: readonly unknown[] | undefined, input: { device?: string; labelSelector?: string }): boolean {
  const previous = (queryKey?.[1] as { input?: { device?: string; labelSelector?: string } } | undefined)?.input;
  return previous !== undefined && previous.device === input.device && previous.labelSelector === input.labelSelector;
}
