"use client";

import { useState, type RefObject } from "react";
import { Button } from "./button";

/**
 * Copies `text`: the Clipboard API where the page is a secure context, else (the console over
 * plain HTTP on a LAN address) the selected text of `fallback` through execCommand.
 */
export async function copyText(text: string, fallback: HTMLElement | null): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Fall through to the selection.
  }
  if (!fallback) return false;
  const range = document.createRange();
  range.selectNodeContents(fallback);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
  return document.execCommand("copy");
}

/** A Copy button for `text` shown in `shown` (selected when the clipboard is out of reach), and what happened, announced. */
export function CopyButton({ text, shown, testId, label }: { text: string; shown: RefObject<HTMLElement | null>; testId: string; label?: string }) {
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  return (
    <span className="flex items-center gap-2">
      <span role="status" className="text-xs text-slate-500" data-testid={`${testId}-copied`}>
        {copied === "yes" ? "Copied." : copied === "no" ? "Could not copy: select the text instead." : ""}
      </span>
      <Button size="sm" data-testid={`${testId}-copy`} aria-label={label ? `Copy: ${label}` : undefined} onClick={() => void copyText(text, shown.current).then((ok) => setCopied(ok ? "yes" : "no"))}>
        Copy
      </Button>
    </span>
  );
}
