"use client";

import { useEffect, useRef } from "react";

/** Runs `fn` once `value` has stopped changing for `ms`. */
export function useDebouncedEffect<T>(value: T, ms: number, fn: (value: T) => void): void {
  const fnRef = useRef(fn);
  useEffect(() => {
    fnRef.current = fn;
  });
  useEffect(() => {
    const t = setTimeout(() => fnRef.current(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
}
