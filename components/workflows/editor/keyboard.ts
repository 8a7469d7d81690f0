"use client";

import { useEffect, useRef } from "react";
import type { Editor } from "./use-editor";

/** Typing in a field keeps its own keys (its undo, Backspace, copy). */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/**
 * The canvas's keys: Ctrl+Z undo, Ctrl+Shift+Z or Ctrl+Y redo, Ctrl+C / Ctrl+V copy and
 * paste the selected steps, Ctrl+A select all, Delete or Backspace delete the selection,
 * Escape clear it (Cmd on a Mac). Never while typing in a field, nor with a dialog open.
 */
export function useEditorKeys(actions: Editor["actions"], enabled: boolean) {
  const ref = useRef(actions);
  useEffect(() => {
    ref.current = actions;
  }, [actions]);
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || isTyping(e.target) || document.querySelector("[role=dialog]")) return;
      const a = ref.current;
      const mod = e.ctrlKey || e.metaKey;
      const k = e.key.toLowerCase();
      let handled = true;
      if (mod && k === "z" && !e.shiftKey) a.undo();
      else if (mod && ((k === "z" && e.shiftKey) || k === "y")) a.redo();
      else if (mod && k === "c") a.copy();
      else if (mod && k === "v") a.paste();
      else if (mod && k === "a") a.selectAll();
      else if (!mod && (e.key === "Delete" || e.key === "Backspace")) a.deleteSelection();
      else if (e.key === "Escape") a.clearSelection();
      else handled = false;
      if (handled) e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [enabled]);
}
