"use client";

import { useClock } from "../hooks/use-now";

/** Dates arrive as ISO strings (no transformer on the server); accept both. */
export function toDate(value: string | Date | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function formatRelative(date: Date, now: number): string {
  const seconds = Math.round((now - date.getTime()) / 1000);
  const future = seconds < 0;
  const s = Math.abs(seconds);
  let text: string;
  if (s < 5) return "just now";
  if (s < 60) text = `${s}s`;
  else if (s < 3600) text = `${Math.floor(s / 60)}m`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)}h`;
  else text = `${Math.floor(s / 86_400)}d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function formatAbsolute(date: Date): string {
  return date.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function RelativeTime({ value, never = "never" }: { value: string | Date | null | undefined; never?: string }) {
  const date = toDate(value);
  const time = date?.getTime() ?? null;
  const text = useClock((now) => (time === null ? null : formatRelative(new Date(time), now)));
  if (!date) return <span className="text-slate-500">{never}</span>;
  return (
    <time dateTime={date.toISOString()} title={formatAbsolute(date)} className="whitespace-nowrap">
      {text}
    </time>
  );
}

export function AbsoluteTime({ value }: { value: string | Date | null | undefined }) {
  const date = toDate(value);
  if (!date) return <span className="text-slate-500">—</span>;
  return (
    <time dateTime={date.toISOString()} className="whitespace-nowrap tabular-nums">
      {formatAbsolute(date)}
    </time>
  );
}
