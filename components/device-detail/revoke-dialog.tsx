"use client";

import { useId, useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";

const REASON_MAX = 500;

/**
 * Issue 23: revoke the device's credential (a key or token thought stolen). The reason is
 * required: it is the record of a security decision, shown with the device.
 */
export function RevokeCredentialButton({ name }: { name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const reasonId = useId();
  const hintId = useId();
  const mutation = useMutation(
    trpc.devices.revoke.mutationOptions({
      onSuccess: (device) => {
        queryClient.setQueryData(trpc.devices.get.queryKey({ name }), device);
        void queryClient.invalidateQueries(trpc.devices.events.queryFilter({ name }));
        setOpen(false);
      },
    }),
  );
  const ready = reason.trim() !== "" && !mutation.isPending;

  function close() {
    if (mutation.isPending) return;
    setOpen(false);
  }

  return (
    <>
      <Button
        variant="danger"
        data-testid="revoke-button"
        onClick={() => {
          setReason("");
          mutation.reset();
          setOpen(true);
        }}
      >
        Revoke credential…
      </Button>
      <Dialog
        open={open}
        onClose={close}
        title={`Revoke ${name}'s credential?`}
        data-testid="revoke-dialog"
        footer={
          <>
            <Button onClick={close} disabled={mutation.isPending}>
              Cancel
            </Button>
            <Button variant="danger" data-testid="confirm-revoke" disabled={!ready} onClick={() => mutation.mutate({ name, reason })}>
              {mutation.isPending ? "Revoking…" : "Revoke credential"}
            </Button>
          </>
        }
      >
        <form
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (ready) mutation.mutate({ name, reason });
          }}
        >
          <p>
            From now on the server refuses this device&apos;s certificate and token, and its agent stops. It stays listed, shown as revoked, and goes Offline; a decommission of
            it then completes at once, without its agent. <strong className="font-semibold text-slate-900">This cannot be undone: the device must enroll again.</strong>
          </p>
          {mutation.isError && <InlineError>{errorMessage(mutation.error)}</InlineError>}
          <div>
            <label htmlFor={reasonId} className="mb-1 block text-slate-700">
              Reason <span className="text-slate-500">(required)</span>
            </label>
            <textarea
              id={reasonId}
              data-testid="revoke-reason"
              aria-describedby={hintId}
              autoFocus
              required
              rows={3}
              maxLength={REASON_MAX}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-red-500 focus:outline-none"
            />
            <p id={hintId} className="mt-1 text-xs text-slate-500">
              Why, for the record: shown with the device and in its events (at most {REASON_MAX} characters).
            </p>
          </div>
        </form>
      </Dialog>
    </>
  );
}
