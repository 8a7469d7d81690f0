"use client";

import { useEffect, useRef } from "react";

export interface InboxKeyHandlers {
  move: (delta: 1 | -1) => void;
  toggle: () => void;
  approve: () => void;
  reject: () => void;
  open: () => void;
}

/** Where typing goes: keys pressed there are text, not shortcuts. */
function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) return !["checkbox", "radio", "button", "submit", "reset"].includes(target.type);
  return false;
}

/**
 * The inbox's keyboard: j/k move, x selects, a approves, r rejects, Enter opens. Off while
 * a dialog is open or focus is in a text field; modified keys are left to the browser.
 */
export function useInboxKeys(enabled: boolean, handlers: InboxKeyHandlers): void {
  const ref = useRef(handlers);
  useEffect(() => {
    ref.current = handlers;
  });
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey || isTextEntry(e.target)) return;
      if (document.querySelector("dialog[open]")) return;
      const h = ref.current;
      switch (e.key) {
        case "j":
          h.move(1);
          break;
        case "k":
          h.move(-1);
          break;
        case "x":
          h.toggle();
          break;
        case "a":
          h.approve();
          break;
        case "r":
          h.reject();
          break;
        case "Enter":
          // Enter on a focused link or button does what that control does.
          if (e.target instanceof HTMLElement && e.target.closest("a,button")) return;
          h.open();
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [enabled]);
}
