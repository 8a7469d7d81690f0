"use client";

import { Link } from "@/components/ui/link";
import { useState } from "react";
import { useRouter } from "next/navigation";
import { useQueryClient } from "@tanstack/react-query";
import { toInput, type EditorDoc } from "@/lib/workflow-editor";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { errorMessage, useTRPC, useTRPCClient } from "../../trpc";
import { Button } from "../../ui/button";
import { InlineError } from "../../ui/states";
import { savePositions } from "./positions";
import { useIdempotencyKey } from "../../hooks/use-idempotency-key";

type Busy = "save" | "run" | null;

/**
 * Save draft (a new workflow is created without starting it; a saved one is replaced, PUT)
 * and Run (saved first when there are edits, then started: rerun, which also starts a draft;
 * then the run view). Disabled while the draft has problems; the server's refusals (400,
 * 409: a step started meanwhile) show as they are.
 */
export function SaveBar({ doc, workflow, dirty, blocked }: { doc: EditorDoc; workflow: WorkflowObject | undefined; dirty: boolean; blocked: string | null }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [busy, setBusy] = useState<Busy>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const creating = workflow === undefined;
  const running = workflow?.status.phase === "Running";

  const stored = (w: WorkflowObject) => {
    queryClient.setQueryData(trpc.workflows.get.queryKey({ name: w.metadata.name }), w);
    void queryClient.invalidateQueries(trpc.workflows.list.pathFilter());
    void queryClient.invalidateQueries(trpc.workflows.events.queryFilter({ name: w.metadata.name }));
    savePositions(w.metadata.name, doc.positions);
  };

  const { idempotencyKey, renew } = useIdempotencyKey();
  const save = async (): Promise<WorkflowObject> => {
    const w = creating
      ? await client.workflows.create.mutate({ workflow: toInput(doc), start: false, idempotencyKey })
      : await client.workflows.update.mutate({ name: doc.name, workflow: toInput(doc) });
    if (creating) renew();
    stored(w);
    return w;
  };

  const run = async (what: Busy) => {
    setBusy(what);
    setError(null);
    setNote(null);
    try {
      if (what === "save") {
        const w = await save();
        if (creating) router.replace(`/workflows/${encodeURIComponent(w.metadata.name)}/edit`);
        else setNote(running ? "Saved: the running run picks up the changed steps." : "Saved.");
      } else {
        let w = creating || dirty ? await save() : workflow!;
        if (w.status.phase !== "Running") {
          w = await client.workflows.rerun.mutate({ name: w.metadata.name });
          stored(w);
        }
        router.push(`/workflows/${encodeURIComponent(w.metadata.name)}`);
      }
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const disabled = busy !== null || blocked !== null;
  return (
    <div className="flex flex-wrap items-center justify-end gap-2" data-testid="editor-save-bar">
      {error && (
        <div className="mr-auto" data-testid="editor-server-error">
          <InlineError>{error}</InlineError>
        </div>
      )}
      {!error && note && (
        <span className="mr-auto text-sm text-emerald-700" role="status" data-testid="editor-saved">
          {note}
        </span>
      )}
      {!error && !note && blocked && (
        <span className="mr-auto text-sm text-slate-500" data-testid="editor-blocked">
          Save and Run wait: {blocked}.
        </span>
      )}
      {!error && !note && !blocked && !creating && !dirty && <span className="mr-auto text-sm text-slate-500">No unsaved changes.</span>}
      <Link href={creating ? "/workflows" : `/workflows/${encodeURIComponent(doc.name)}`} className="px-2 text-sm text-slate-600 hover:underline">
        {creating ? "Cancel" : "Back to the run view"}
      </Link>
      <Button onClick={() => void run("save")} disabled={disabled || (!creating && !dirty)} data-testid="editor-save">
        {busy === "save" ? "Saving…" : creating ? "Save draft" : "Save"}
      </Button>
      <Button
        variant="primary"
        onClick={() => void run("run")}
        disabled={disabled || (running && !dirty)}
        title={running ? (dirty ? "Save: the running run picks up the changes" : "Already running") : "Save, start a run and watch it"}
        data-testid="editor-run"
      >
        {busy === "run" ? "Starting…" : running ? "Save and watch" : "Run"}
      </Button>
    </div>
  );
}
