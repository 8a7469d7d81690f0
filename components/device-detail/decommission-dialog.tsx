"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";

/** Decommissioning cannot be undone: the operator types the device's name to confirm. */
export function DecommissionButton({ name, revoked = false }: { name: string; revoked?: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const mutation = useMutation(
    trpc.devices.decommission.mutationOptions({
      onSuccess: (device) => {
        queryClient.setQueryData(trpc.devices.get.queryKey({ name }), device);
        void queryClient.invalidateQueries(trpc.devices.events.queryFilter({ name }));
        setOpen(false);
      },
    }),
  );

  function close() {
    if (mutation.isPending) return;
    setOpen(false);
  }

  return (
    <>
      <Button
        variant="danger"
        data-testid="decommission-button"
        onClick={() => {
          setTyped("");
          mutation.reset();
          setOpen(true);
        }}
      >
        Decommission…
      </Button>
      <Dialog
        open={open}
        onClose={close}
        title={`Decommission ${name}?`}
        data-testid="decommission-dialog"
        footer={
          <>
            <Button onClick={close} disabled={mutation.isPending}>
              Cancel
            </Button>
            <Button
              variant="danger"
              data-testid="confirm-decommission"
              disabled={typed !== name || mutation.isPending}
              onClick={() => mutation.mutate({ name })}
            >
              {mutation.isPending ? "Decommissioning…" : "Decommission"}
            </Button>
          </>
        }
      >
        <form
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (typed === name && !mutation.isPending) mutation.mutate({ name });
          }}
        >
          <p>
            {revoked
              ? "Its credential is revoked, so its agent cannot take part: the decommission completes at once on the server. It stays listed as Decommissioned. "
              : "The device will stop taking work, run its decommissioning steps and then lose its credential. It stays listed as Decommissioned. "}
            <strong className="font-semibold text-slate-900">This cannot be undone.</strong>
          </p>
          {mutation.isError && <InlineError>{errorMessage(mutation.error)}</InlineError>}
          <label className="block">
            <span className="mb-1 block text-slate-700">
              Type <code className="rounded bg-slate-100 px-1 font-mono text-slate-900">{name}</code> to confirm
            </span>
            <input
              data-testid="confirm-input"
              autoFocus
              autoComplete="off"
              spellCheck={false}
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              className="block w-full rounded-md border-0 px-3 py-2 font-mono text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-red-500 focus:outline-none"
            />
          </label>
        </form>
      </Dialog>
    </>
  );
}
