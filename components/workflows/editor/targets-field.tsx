"use client";

import { useState } from "react";
import { useQueries, useQuery } from "@tanstack/react-query";
import { deviceList, selectorObject, selectorText, type JobDraft } from "@/lib/workflow-editor";
import { SelectorError } from "@/lib/label-selector";
import { errorMessage, trpcErrorCode, useTRPC } from "../../trpc";
import { useDebouncedValue } from "../../hooks/use-debounced-value";
import { TargetPreview } from "../../actions/target-preview";
import { cx } from "../../ui/cx";
import { badRing, input, Labelled, okRing, Toggle, useDraftText } from "./fields";

type Targets = JobDraft["targets"];
type Mode = "devices" | "selector";

/** Devices typed by name: each checked on the server (the preview of one device), the first few shown. */
const CHECKED_DEVICES = 20;

function DevicesPreview({ names }: { names: string[] }) {
  const trpc = useTRPC();
  const shown = names.slice(0, CHECKED_DEVICES);
  const checks = useQueries({ queries: shown.map((device) => ({ ...trpc.actions.preview.queryOptions({ device }), staleTime: 5_000, retry: false })) });
  if (names.length === 0) return <p className="rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-500 ring-1 ring-slate-200 ring-inset">Type device names, separated by commas or spaces.</p>;
  const found = checks.filter((c) => c.data && c.data.total > 0).length;
  return (
    <div className="rounded-md bg-slate-50 px-3 py-2 text-sm ring-1 ring-slate-200 ring-inset" aria-live="polite" data-testid="targets-preview" data-count={found}>
      <p className="font-medium text-slate-900">
        {found} of {names.length} device{names.length === 1 ? "" : "s"} enrolled{names.length > shown.length ? ` (the first ${shown.length} checked)` : ""}
      </p>
      <ul className="mt-1.5 flex flex-wrap gap-1">
        {shown.map((name, i) => {
          const c = checks[i]!;
          const bad = c.isError;
          const why = bad ? (trpcErrorCode(c.error) === "NOT_FOUND" ? "no such device" : errorMessage(c.error)) : (c.data?.devices[0]?.summary ?? "…");
          return (
            <li key={name} title={why} className={cx("rounded px-1.5 py-0.5 font-mono text-[11px] ring-1 ring-inset", bad ? "bg-red-50 text-red-700 ring-red-200" : "bg-white text-slate-700 ring-slate-200")}>
              {name}
              {bad && <span className="ml-1 font-sans">({why})</span>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function SelectorPreview({ selector }: { selector: string }) {
  const trpc = useTRPC();
  const settled = useDebouncedValue(selector, 300);
  const preview = useQuery({ ...trpc.actions.preview.queryOptions({ labelSelector: settled }), staleTime: 5_000, retry: false });
  return (
    <div data-testid="targets-preview" data-count={preview.data?.total ?? ""}>
      <TargetPreview preview={preview.data} loading={preview.isFetching || settled !== selector} error={preview.error} idle={null} device={null} />
    </div>
  );
}

/**
 * A job's targets: device names, or a label selector (typed as text, held as the spec's
 * object form), with the devices they select now (tRPC actions.preview) as the operator types.
 */
export function TargetsField({ targets, onChange, disabled }: { targets: Targets; onChange: (t: Targets) => void; disabled: boolean }) {
  const [chosen, setChosen] = useState<Mode>(targets.selector ? "selector" : "devices");
  const mode: Mode = targets.devices ? "devices" : targets.selector ? "selector" : chosen;
  const external = targets.devices ? targets.devices.join(", ") : targets.selector ? selectorText(targets.selector) : "";
  const [text, setText] = useDraftText(external);
  const [error, setError] = useState<string | null>(null);

  const type = (t: string) => {
    if (mode === "devices") {
      const names = deviceList(t);
      setError(null);
      setText(t, names.join(", "));
      onChange(names.length ? { devices: names } : {});
      return;
    }
    if (t.trim() === "") {
      setError(null);
      setText(t, "");
      onChange({});
      return;
    }
    try {
      const selector = selectorObject(t);
      setError(null);
      setText(t, selectorText(selector));
      onChange({ selector });
    } catch (e) {
      setText(t);
      setError(e instanceof SelectorError ? e.message : String(e));
    }
  };

  const names = mode === "devices" ? deviceList(text) : [];
  const selectorReady = mode === "selector" && !error && text.trim() !== "";
  return (
    <Labelled label="Targets" error={error} hint={mode === "selector" ? "Every enrolled device whose labels match when the step starts." : "Each device gets one action."}>
      <Toggle
        testId="targets-mode"
        disabled={disabled}
        value={mode}
        options={[
          { value: "devices", label: "Devices" },
          { value: "selector", label: "Label selector" },
        ]}
        onChange={(m) => {
          setChosen(m as Mode);
          setError(null);
          setText("", "");
          onChange({});
        }}
      />
      <input
        value={text}
        disabled={disabled}
        onChange={(e) => type(e.target.value)}
        placeholder={mode === "devices" ? "gw-001, gw-002" : "site=lab,role in (gateway)"}
        spellCheck={false}
        autoComplete="off"
        aria-label={mode === "devices" ? "Device names" : "Label selector"}
        aria-invalid={error !== null}
        data-testid="step-targets"
        className={cx(input, "mt-1.5 font-mono text-[12.5px]", error ? badRing : okRing)}
      />
      {!disabled && (mode === "devices" ? <DevicesPreview names={names} /> : selectorReady ? <SelectorPreview selector={text.trim()} /> : null)}
    </Labelled>
  );
}
