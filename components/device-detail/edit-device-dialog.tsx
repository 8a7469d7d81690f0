"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import { cx } from "../ui/cx";
import { isValidLabelKey, isValidLabelValue } from "@/lib/label-selector";
import { aliasProblem, DEVICE_ALIAS_MAX } from "@/lib/device-alias";

interface Row {
  id: number;
  key: string;
  value: string;
}

const MAX_LABELS = 64;

/** Problems per row (the same rules as the API: lib/label-selector, lib/protocol LabelsSchema), keyed by row id. */
export function labelRowProblems(rows: { id: number; key: string; value: string }[]): Map<number, { key?: string; value?: string }> {
  const problems = new Map<number, { key?: string; value?: string }>();
  const seen = new Map<string, number>();
  for (const r of rows) {
    const p: { key?: string; value?: string } = {};
    const key = r.key.trim();
    if (key === "") p.key = "a key is required";
    else if (!isValidLabelKey(key)) p.key = "letters, digits, '-', '_' and '.', starting and ending with a letter or digit (an optional prefix/ before)";
    else if (seen.has(key)) p.key = `"${key}" is already above`;
    if (!isValidLabelValue(r.value.trim())) p.value = "up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
    if (key !== "" && !seen.has(key)) seen.set(key, r.id);
    if (p.key || p.value) problems.set(r.id, p);
  }
  return problems;
}

const inputClass = (bad: boolean) =>
  cx(
    "block w-full rounded-md border-0 px-2.5 py-1.5 font-mono text-sm text-slate-900 ring-1 ring-inset focus:ring-2 focus:outline-none",
    bad ? "ring-red-400 focus:ring-red-500" : "ring-slate-300 focus:ring-brand-500",
  );

/** "Edit" on the device page: alias and labels in one dialog, one request (devices.update). Operators only. */
export function EditDeviceButton({ name, alias, labels }: { name: string; alias: string | null; labels: Record<string, string> }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [aliasText, setAliasText] = useState("");
  const [rows, setRows] = useState<Row[]>([]);
  const [nextId, setNextId] = useState(0);
  const [tried, setTried] = useState(false);
  const mutation = useMutation(
    trpc.devices.update.mutationOptions({
      onSuccess: (device) => {
        queryClient.setQueryData(trpc.devices.get.queryKey({ name }), device);
        void queryClient.invalidateQueries(trpc.devices.events.queryFilter({ name }));
        void queryClient.invalidateQueries(trpc.devices.list.queryFilter());
        setOpen(false);
      },
    }),
  );

  const start = () => {
    const initial = Object.entries(labels).map(([key, value], i) => ({ id: i, key, value }));
    setRows(initial);
    setNextId(initial.length);
    setAliasText(alias ?? "");
    setTried(false);
    mutation.reset();
    setOpen(true);
  };
  const close = () => {
    if (!mutation.isPending) setOpen(false);
  };

  const aliasError = aliasProblem(aliasText);
  const problems = labelRowProblems(rows);
  const tooMany = rows.length > MAX_LABELS;
  const valid = aliasError === null && problems.size === 0 && !tooMany;
  const submit = () => {
    setTried(true);
    if (!valid || mutation.isPending) return;
    mutation.mutate({ name, alias: aliasText.trim() === "" ? null : aliasText.trim(), labels: Object.fromEntries(rows.map((r) => [r.key.trim(), r.value.trim()])) });
  };
  // A row's problems show once the operator has left it or tried to save.
  const [touched, setTouched] = useState<Set<number>>(new Set());
  const touch = (id: number) => setTouched((t) => (t.has(id) ? t : new Set(t).add(id)));
  const shown = (id: number) => tried || touched.has(id);

  return (
    <>
      <Button data-testid="edit-device-button" onClick={start}>
        Edit
      </Button>
      <Dialog
        open={open}
        onClose={close}
        title={`Edit ${name}`}
        size="lg"
        data-testid="edit-device-dialog"
        footer={
          <>
            <Button onClick={close} disabled={mutation.isPending}>
              Cancel
            </Button>
            <Button variant="primary" data-testid="edit-device-save" disabled={mutation.isPending || (tried && !valid)} onClick={submit}>
              {mutation.isPending ? "Saving…" : "Save"}
            </Button>
          </>
        }
      >
        <form
          className="space-y-4"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <label className="block">
            <span className="mb-1 block font-medium text-slate-700">Alias</span>
            <input
              data-testid="edit-alias"
              autoFocus
              autoComplete="off"
              value={aliasText}
              maxLength={DEVICE_ALIAS_MAX + 20}
              placeholder="A display name, e.g. Boiler room pump"
              aria-invalid={aliasError !== null}
              aria-describedby="edit-alias-help"
              onChange={(e) => setAliasText(e.target.value)}
              className={cx(inputClass(aliasError !== null), "font-sans")}
            />
            <span id="edit-alias-help" className={cx("mt-1 block text-xs", aliasError ? "text-red-700" : "text-slate-500")} data-testid={aliasError ? "edit-alias-error" : undefined}>
              {aliasError ?? `Shown beside the name; up to ${DEVICE_ALIAS_MAX} characters. Empty: none. Selectors and the agent keep using the name.`}
            </span>
          </label>

          <fieldset>
            <legend className="mb-1 font-medium text-slate-700">Labels</legend>
            <p className="mb-2 text-xs text-slate-500">They decide fleet membership: saving moves the device into, out of or between fleets at once.</p>
            {rows.length === 0 && <p className="mb-2 text-slate-500">No labels.</p>}
            <ul className="space-y-2" data-testid="edit-labels">
              {rows.map((r, i) => {
                const p = shown(r.id) ? problems.get(r.id) : undefined;
                return (
                  <li key={r.id} className="grid grid-cols-[1fr_auto_1fr_auto] items-start gap-2" data-testid={`edit-label-row-${i}`}>
                    <div>
                      <input
                        aria-label={`Label ${i + 1} key`}
                        data-testid={`edit-label-key-${i}`}
                        value={r.key}
                        autoComplete="off"
                        spellCheck={false}
                        aria-invalid={p?.key !== undefined}
                        onBlur={() => touch(r.id)}
                        onChange={(e) => setRows((all) => all.map((x) => (x.id === r.id ? { ...x, key: e.target.value } : x)))}
                        className={inputClass(p?.key !== undefined)}
                      />
                      {p?.key && (
                        <span className="mt-1 block text-xs text-red-700" data-testid={`edit-label-key-error-${i}`}>
                          {p.key}
                        </span>
                      )}
                    </div>
                    <span className="pt-1.5 font-mono text-slate-500">=</span>
                    <div>
                      <input
                        aria-label={`Label ${i + 1} value`}
                        data-testid={`edit-label-value-${i}`}
                        value={r.value}
                        autoComplete="off"
                        spellCheck={false}
                        aria-invalid={p?.value !== undefined}
                        onBlur={() => touch(r.id)}
                        onChange={(e) => setRows((all) => all.map((x) => (x.id === r.id ? { ...x, value: e.target.value } : x)))}
                        className={inputClass(p?.value !== undefined)}
                      />
                      {p?.value && (
                        <span className="mt-1 block text-xs text-red-700" data-testid={`edit-label-value-error-${i}`}>
                          {p.value}
                        </span>
                      )}
                    </div>
                    <Button variant="ghost" size="sm" className="mt-1" aria-label={`Remove label ${r.key || i + 1}`} onClick={() => setRows((all) => all.filter((x) => x.id !== r.id))}>
                      Remove
                    </Button>
                  </li>
                );
              })}
            </ul>
            <div className="mt-2 flex items-center gap-3">
              <Button
                size="sm"
                data-testid="edit-add-label"
                disabled={rows.length >= MAX_LABELS}
                onClick={() => {
                  setRows((all) => [...all, { id: nextId, key: "", value: "" }]);
                  setNextId((n) => n + 1);
                }}
              >
                Add label
              </Button>
              {tooMany && <span className="text-xs text-red-700">at most {MAX_LABELS} labels</span>}
            </div>
          </fieldset>
          {mutation.isError && <InlineError>{errorMessage(mutation.error)}</InlineError>}
          {/* Enter in a field saves. */}
          <button type="submit" hidden />
        </form>
      </Dialog>
    </>
  );
}
