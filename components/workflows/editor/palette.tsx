"use client";

import { useState, type DragEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { BUILTIN_ACTION_KINDS } from "@/lib/action-status";
import { ActionKind } from "@/lib/protocol";
import type { NewStep } from "@/lib/workflow-editor";
import { useTRPC } from "../../trpc";
import { cx } from "../../ui/cx";

/** What a palette item carries while dragged onto the canvas. */
export const PALETTE_MIME = "application/x-drover-step";

export function parsePaletteItem(text: string): NewStep | null {
  try {
    const v = JSON.parse(text) as NewStep;
    if (v.type === "job" && typeof v.kind === "string") return { type: "job", kind: v.kind };
    if (v.type === "reference" && typeof v.workflow === "string") return { type: "reference", workflow: v.workflow };
  } catch {
    // Something else was dropped.
  }
  return null;
}

const item = "flex w-full cursor-grab items-center gap-2 rounded-md bg-white px-2.5 py-1.5 text-left text-sm text-slate-700 ring-1 ring-slate-200 ring-inset hover:bg-slate-50 hover:ring-brand-300 active:cursor-grabbing";

function PaletteItem({ what, label, hint, onAdd, testId }: { what: NewStep; label: string; hint: string; onAdd: (what: NewStep) => void; testId: string }) {
  const onDragStart = (e: DragEvent) => {
    e.dataTransfer.setData(PALETTE_MIME, JSON.stringify(what));
    e.dataTransfer.effectAllowed = "copy";
  };
  return (
    <button type="button" draggable onDragStart={onDragStart} onClick={() => onAdd(what)} className={item} title={`${hint}: click to add, or drag onto the canvas`} data-testid={testId}>
      <span className="font-mono text-[12px]">{label}</span>
    </button>
  );
}

/**
 * Steps to add, by click (placed beside the others) or by dragging onto the canvas: a job of
 * a built-in kind (or any kind typed), or a reference to a saved workflow.
 */
export function Palette({ onAdd, self }: { onAdd: (what: NewStep) => void; self: string }) {
  const trpc = useTRPC();
  const workflows = useQuery(trpc.workflows.list.queryOptions({ limit: 100 }));
  const [kind, setKind] = useState("");
  const kindOk = ActionKind.safeParse(kind.trim()).success;
  const others = (workflows.data?.items ?? []).map((w) => w.name).filter((n) => n !== self);

  return (
    <aside className="flex max-h-48 shrink-0 flex-col gap-3 overflow-y-auto border-b border-slate-100 p-3 md:max-h-none md:w-44 md:border-r md:border-b-0" data-testid="editor-palette" aria-label="Steps to add">
      <div>
        <h3 className="mb-1.5 text-[11px] font-semibold tracking-wide text-slate-500 uppercase">Job</h3>
        <div className="space-y-1">
          {BUILTIN_ACTION_KINDS.map((k) => (
            <PaletteItem key={k} what={{ type: "job", kind: k }} label={k} hint={`a ${k} job`} onAdd={onAdd} testId={`palette-job-${k}`} />
          ))}
        </div>
        <form
          className="mt-1.5 flex gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            if (!kindOk) return;
            onAdd({ type: "job", kind: kind.trim() });
            setKind("");
          }}
        >
          <input
            value={kind}
            onChange={(e) => setKind(e.target.value)}
            placeholder="other kind"
            aria-label="Another action kind"
            className={cx("min-w-0 flex-1 rounded-md border-0 px-2 py-1 text-xs ring-1 ring-inset focus:ring-2 focus:outline-none", kind && !kindOk ? "ring-red-400" : "ring-slate-300 focus:ring-brand-500")}
          />
          <button type="submit" disabled={!kindOk} className="rounded-md px-1.5 text-xs font-medium text-brand-700 disabled:text-slate-300">
            Add
          </button>
        </form>
      </div>
      <div>
        <h3 className="mb-1.5 text-[11px] font-semibold tracking-wide text-slate-500 uppercase">Workflow reference</h3>
        {workflows.isPending ? (
          <p className="text-xs text-slate-600">Loading…</p>
        ) : others.length === 0 ? (
          <p className="text-xs text-slate-600">No other saved workflow.</p>
        ) : (
          <div className="space-y-1">
            {others.map((w) => (
              <PaletteItem key={w} what={{ type: "reference", workflow: w }} label={`→ ${w}`} hint={`run workflow ${w}`} onAdd={onAdd} testId={`palette-ref-${w}`} />
            ))}
          </div>
        )}
      </div>
      <p className="mt-auto text-[11px] leading-4 text-slate-600">
        Drag from a step&apos;s right handle to another&apos;s left handle: the second depends on the first.
      </p>
    </aside>
  );
}
