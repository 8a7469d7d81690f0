"use client";

import { useId, useState, type FormEvent } from "react";
import { parseLabels, SelectorError, type Labels } from "@/lib/label-selector";
import { Button } from "../ui/button";
import { LabelChips } from "../ui/label-chips";
import { InlineError } from "../ui/states";
import { cx } from "../ui/cx";

const field = "block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-inset focus:ring-2 focus:outline-none";
const ok = "ring-slate-300 focus:ring-brand-500";
const bad = "ring-red-400 focus:ring-red-500";

/** Seconds, 0 for never: a token for an afternoon's installs, a week's rollout, or a standing one. */
const EXPIRY_CHOICES: [string, number][] = [
  ["1 hour", 3600],
  ["24 hours", 86_400],
  ["7 days", 7 * 86_400],
  ["30 days", 30 * 86_400],
  ["Never", 0],
];

export interface NewToken {
  name: string;
  labels: Labels;
  expiresInSeconds?: number;
  maxUses?: number;
  autoApprove: boolean;
}

/** `site=lab, env=dev` as labels, or why not (the server's rules: lib/label-selector). */
function readLabels(text: string): { ok: true; labels: Labels } | { ok: false; error: string } {
  try {
    const labels = parseLabels(text);
    if (Object.keys(labels).length > 64) return { ok: false, error: "at most 64 labels" };
    return { ok: true, labels };
  } catch (error) {
    return { ok: false, error: error instanceof SelectorError ? error.message : String(error) };
  }
}

function readMaxUses(text: string): { ok: true; value: number | undefined } | { ok: false; error: string } {
  if (text.trim() === "") return { ok: true, value: undefined };
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) return { ok: false, error: "a whole number from 1 to 1,000,000, or empty for no limit" };
  return { ok: true, value: n };
}

/**
 * A new enrollment token: name, labels for the devices, expiry, how many devices, and whether
 * they are approved at once. Checked as typed with the server's own rules; the server checks again.
 */
export function CreateTokenForm({ pending, error, onCreate }: { pending: boolean; error: string | null; onCreate: (token: NewToken) => void }) {
  const id = useId();
  const [name, setName] = useState("");
  const [labelText, setLabelText] = useState("");
  const [expiresIn, setExpiresIn] = useState(86_400);
  const [maxUsesText, setMaxUsesText] = useState("");
  const [autoApprove, setAutoApprove] = useState(false);
  const [tried, setTried] = useState(false);

  const labels = readLabels(labelText);
  const maxUses = readMaxUses(maxUsesText);
  const nameError = name.trim() === "" ? "give it a name, e.g. the site or the batch of machines" : name.trim().length > 64 ? "at most 64 characters" : null;
  const valid = labels.ok && maxUses.ok && nameError === null;

  function submit(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    if (!labels.ok || !maxUses.ok || nameError !== null) return;
    onCreate({
      name: name.trim(),
      labels: labels.labels,
      ...(expiresIn > 0 ? { expiresInSeconds: expiresIn } : {}),
      ...(maxUses.value !== undefined ? { maxUses: maxUses.value } : {}),
      autoApprove,
    });
  }

  return (
    <form onSubmit={submit} className="space-y-4 px-4 py-4 text-sm" data-testid="create-token-form" noValidate>
      <div className="grid gap-4 md:grid-cols-2">
        <label className="block">
          <span className="mb-1 block font-medium text-slate-800">Name</span>
          <input
            data-testid="token-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="e.g. lab rack 3"
            maxLength={64}
            autoComplete="off"
            aria-invalid={tried && nameError ? true : undefined}
            aria-describedby={tried && nameError ? `${id}-name-error` : undefined}
            className={cx(field, tried && nameError ? bad : ok)}
          />
          {tried && nameError && (
            <span id={`${id}-name-error`} className="mt-1 block text-xs text-red-600" role="alert">
              {nameError}
            </span>
          )}
        </label>
        <label className="block">
          <span className="mb-1 block font-medium text-slate-800">
            Labels <span className="font-normal text-slate-500">(put on every device; they win over the device&apos;s own)</span>
          </span>
          <input
            data-testid="token-labels"
            value={labelText}
            onChange={(e) => setLabelText(e.target.value)}
            placeholder="site=lab, env=dev"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={!labels.ok ? true : undefined}
            aria-describedby={`${id}-labels-help`}
            className={cx(field, "font-mono", labels.ok ? ok : bad)}
          />
          <span id={`${id}-labels-help`} className="mt-1 block text-xs">
            {labels.ok ? (
              Object.keys(labels.labels).length > 0 ? (
                <span data-testid="token-labels-preview">
                  <LabelChips labels={labels.labels} />
                </span>
              ) : (
                <span className="text-slate-500">key=value, separated by commas</span>
              )
            ) : (
              <span className="text-red-600" role="alert">
                {labels.error}
              </span>
            )}
          </span>
        </label>
        <label className="block">
          <span className="mb-1 block font-medium text-slate-800">Expires</span>
          <select data-testid="token-expires" value={expiresIn} onChange={(e) => setExpiresIn(Number(e.target.value))} className={cx(field, ok)}>
            {EXPIRY_CHOICES.map(([label, seconds]) => (
              <option key={seconds} value={seconds}>
                {seconds === 0 ? label : `in ${label}`}
              </option>
            ))}
          </select>
        </label>
        <label className="block">
          <span className="mb-1 block font-medium text-slate-800">
            Maximum uses <span className="font-normal text-slate-500">(devices that may enroll with it; empty: no limit)</span>
          </span>
          <input
            data-testid="token-max-uses"
            inputMode="numeric"
            value={maxUsesText}
            onChange={(e) => setMaxUsesText(e.target.value)}
            placeholder="no limit"
            autoComplete="off"
            aria-invalid={!maxUses.ok ? true : undefined}
            aria-describedby={!maxUses.ok ? `${id}-uses-error` : undefined}
            className={cx(field, maxUses.ok ? ok : bad)}
          />
          {!maxUses.ok && (
            <span id={`${id}-uses-error`} className="mt-1 block text-xs text-red-600" role="alert">
              {maxUses.error}
            </span>
          )}
        </label>
      </div>
      <label className="flex items-start gap-2">
        <input type="checkbox" data-testid="token-auto-approve" checked={autoApprove} onChange={(e) => setAutoApprove(e.target.checked)} className="mt-0.5 size-3.5 accent-brand-600" />
        <span>
          <span className="font-medium text-slate-800">Approve devices at once</span>
          <span className="block text-xs text-slate-500">
            Off: devices that enroll with this token wait in Enrollments for an operator, with its labels already on the request.
          </span>
        </span>
      </label>
      {error && <InlineError>{error}</InlineError>}
      <div className="flex justify-end">
        <Button type="submit" variant="primary" data-testid="create-token" disabled={pending || (tried && !valid)}>
          {pending ? "Creating…" : "Create token"}
        </Button>
      </div>
    </form>
  );
}
