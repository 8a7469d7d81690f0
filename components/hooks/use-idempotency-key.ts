"use client";

import { useCallback, useState } from "react";

/** 128 random bits as hex: crypto.getRandomValues works where randomUUID does not (a console served over plain HTTP). */
function newKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The idempotency key of one form's creates (issue 22, server/idempotency/): every submit of the
 * form sends the same key, so a double click or a submit retried after a lost answer gets the
 * first answer instead of a second object; `renew` after a success makes the next create a new
 * one. A refused submit (4xx) is not kept by the server, so the corrected one reuses the key.
 */
export function useIdempotencyKey(): { idempotencyKey: string; renew: () => void } {
  const [idempotencyKey, setKey] = useState(newKey);
  const renew = useCallback(() => setKey(newKey()), []);
  return { idempotencyKey, renew };
}
