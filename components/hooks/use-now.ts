"use client";

import { useSyncExternalStore } from "react";

/**
 * One clock for the whole console, ticking every second while anything reads it. A reader
 * derives what it shows from the time (`useClock(now => …)`) and re-renders only when that
 * changes: "12s ago" moves every second, "3h ago" once an hour, and a page of 200 rows does
 * not re-render 200 times a second for nothing (issue 10: times lagged by up to 10 s).
 */
const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === null) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** `derive(now)`, kept current; `derive` must return a primitive (a string, a number) so equal results do not re-render. */
export function useClock<T extends string | number | boolean | null>(derive: (now: number) => T): T {
  const read = () => derive(timer === null ? Date.now() : now);
  return useSyncExternalStore(subscribe, read, read);
}

/** The current time, to the second. */
export function useNow(): number {
  return useClock((t) => Math.floor(t / 1000) * 1000);
}
