"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";

/** Lifts ConflictPaused: the operator accepts the version the device reported. */
export function ResumeButton({ name }: { name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const mutation = useMutation(
    trpc.devices.resume.mutationOptions({
      onSuccess: (device) => {
        queryClient.setQueryData(trpc.devices.get.queryKey({ name }), device);
        setOpen(false);
      },
    }),
  );
  return (
    <>
      <Button
        variant="primary"
        data-testid="resume-button"
        onClick={() => {
          mutation.reset();
          setOpen(true);
        }}
      >
        Resume
      </Button>
      <Dialog
        open={open}
        onClose={() => !mutation.isPending && setOpen(false)}
        title={`Resume ${name}?`}
        footer={
          <>
            <Button onClick={() => setOpen(false)} disabled={mutation.isPending}>
              Cancel
            </Button>
            <Button variant="primary" data-testid="confirm-resume" disabled={mutation.isPending} onClick={() => mutation.mutate({ name })}>
              {mutation.isPending ? "Resuming…" : "Resume device"}
            </Button>
          </>
        }
      >
        <div className="space-y-3">
          <p>
            This device reported a rendered version newer than the server knows, so it was paused instead of being overwritten. Resuming lets the server manage it
            again from its current spec.
          </p>
          {mutation.isError && <InlineError>{errorMessage(mutation.error)}</InlineError>}
        </div>
      </Dialog>
    </>
  );
}
