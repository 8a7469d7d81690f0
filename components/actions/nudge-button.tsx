"use client";

import { useEffect, useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";

/**
 * The escape hatch: reconcile one object now instead of at the next sweep (the API calls it a
 * nudge). Harmless, so no confirmation; the button says what it does, its tooltip how, and the
 * result shows next to it for a moment.
 */
export function NudgeButton({ kind, name, testId, size = "md" }: { kind: "Device" | "Action"; name: string; testId: string; size?: "sm" | "md" }) {
  const trpc = useTRPC();
  const nudge = useMutation(trpc.ops.nudge.mutationOptions());
  const [shown, setShown] = useState(false);

  useEffect(() => {
    if (!shown) return;
    const t = setTimeout(() => setShown(false), 4_000);
    return () => clearTimeout(t);
  }, [shown]);

  return (
    <span className="inline-flex items-center gap-2">
      {shown && nudge.isSuccess && (
        <span className="text-xs text-emerald-700" role="status" data-testid={`${testId}-done`}>
          Checked
        </span>
      )}
      {shown && nudge.isError && (
        <span className="max-w-64 truncate text-xs text-red-700" role="alert" title={errorMessage(nudge.error)}>
          {errorMessage(nudge.error)}
        </span>
      )}
      <Button
        size={size}
        data-testid={testId}
        disabled={nudge.isPending}
        title={
          kind === "Device"
            ? "Don't wait for the next sweep: re-check this device's status now and offer it its pending actions (a nudge)"
            : "Don't wait for the next sweep: re-check this action now and wake its device's long-poll so it is offered at once (a nudge)"
        }
        onClick={() => nudge.mutate({ kind, name }, { onSettled: () => setShown(true) })}
      >
        {nudge.isPending ? "Checking…" : "Check now"}
      </Button>
    </span>
  );
}
