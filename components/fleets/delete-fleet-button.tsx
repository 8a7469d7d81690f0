"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";

/** Delete, confirmed by typing the fleet's name: the members keep their spec, unmanaged. */
export function DeleteFleetButton({ name, members }: { name: string; members: number }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const mutation = useMutation(
    trpc.fleets.delete.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries(trpc.fleets.list.pathFilter());
        void queryClient.invalidateQueries(trpc.devices.list.pathFilter());
        queryClient.removeQueries(trpc.fleets.get.queryFilter({ name }));
        router.push("/fleets");
      },
    }),
  );
  return (
    <>
      <Button
        variant="ghost"
        className="text-red-700 hover:bg-red-50 hover:text-red-800"
        data-testid="delete-fleet"
        onClick={() => {
          setTyped("");
          mutation.reset();
          setOpen(true);
        }}
      >
        Delete…
      </Button>
      <Dialog
        open={open}
        onClose={() => !mutation.isPending && setOpen(false)}
        title={`Delete fleet ${name}?`}
        data-testid="delete-fleet-dialog"
        footer={
          <>
            <Button onClick={() => setOpen(false)} disabled={mutation.isPending}>
              Keep it
            </Button>
            <Button variant="danger" disabled={typed !== name || mutation.isPending} onClick={() => mutation.mutate({ name })} data-testid="confirm-delete-fleet">
              {mutation.isPending ? "Deleting…" : "Delete fleet"}
            </Button>
          </>
        }
      >
        <div className="space-y-3">
          <p>
            Its {members} member{members === 1 ? "" : "s"} keep the spec they have, unmanaged (or join another fleet whose selector matches them). Its template versions and rollout
            history go with it.
          </p>
          {mutation.isError && <InlineError>{errorMessage(mutation.error)}</InlineError>}
          <label className="block">
            <span className="mb-1 block text-slate-700">
              Type <code className="rounded bg-slate-100 px-1">{name}</code> to confirm
            </span>
            <input
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              spellCheck={false}
              className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
            />
          </label>
        </div>
      </Dialog>
    </>
  );
}
