"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { ReasonDialog } from "../ui/reason-dialog";

/** What the server takes (server/devices/lifecycle.ts REVOKE_REASON_MAX). */
const REASON_MAX = 500;

/**
 * Issue 23: revoke the device's credential (a key or token thought stolen). The reason is
 * required: it is the record of a security decision, shown with the device.
 */
export function RevokeCredentialButton({ name }: { name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const mutation = useMutation(
    trpc.devices.revoke.mutationOptions({
      onSuccess: (device) => {
        queryClient.setQueryData(trpc.devices.get.queryKey({ name }), device);
        void queryClient.invalidateQueries(trpc.devices.events.queryFilter({ name }));
        setOpen(false);
      },
    }),
  );

  return (
    <>
      <Button
        variant="danger"
        data-testid="revoke-button"
        onClick={() => {
          mutation.reset();
          setOpen(true);
        }}
      >
        Revoke credential…
      </Button>
      <ReasonDialog
        // Re-keyed on each opening: a fresh, empty reason.
        key={open ? "revoke-open" : "revoke-closed"}
        open={open}
        pending={mutation.isPending}
        error={mutation.isError ? errorMessage(mutation.error) : null}
        title={`Revoke ${name}'s credential?`}
        confirmLabel={mutation.isPending ? "Revoking…" : "Revoke credential"}
        onCancel={() => setOpen(false)}
        onConfirm={(reason) => mutation.mutate({ name, reason })}
        required
        keyboard
        maxLength={REASON_MAX}
        hint={`Why, for the record: shown with the device and in its events (at most ${REASON_MAX} characters).`}
        testIds={{ dialog: "revoke-dialog", confirm: "confirm-revoke", reason: "revoke-reason" }}
      >
        <p>
          From now on the server refuses this device&apos;s certificate and token, and its agent stops. The actions it holds (new or running) end as LOST: it can never
          report them. It stays listed, shown as revoked, and goes Offline; a decommission of it then completes at once, without its agent.{" "}
          <strong className="font-semibold text-slate-900">This cannot be undone: the device must enroll again.</strong>
        </p>
      </ReasonDialog>
    </>
  );
}
