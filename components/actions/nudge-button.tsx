"use client";

import { useEffect, useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";

/**
 * Seed 004's escape hatch: reconcile one object now. Harmless, so no confirmation; the
 * result shows next to the button for a moment.
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
          Nudged
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
        title={kind === "Device" ? "Reconcile this device now: offer its pending actions and re-check its status" : "Reconcile this action now: wake its device's long-poll"}
        onClick={() => nudge.mutate({ kind, name }, { onSettled: () => setShown(true) })}
      >
        {nudge.isPending ? "Nudging…" : "Nudge"}
      </Button>
    </span>
  );
}
