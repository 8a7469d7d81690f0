"use client";

import { useState } from "react";
import { useDebouncedEffect } from "./use-debounced-effect";

/** `value`, once it has stopped changing for `ms`. */
export function useDebouncedValue<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useDebouncedEffect(value, ms, setSettled);
  return settled;
}
