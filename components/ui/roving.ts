import type { KeyboardEvent } from "react";

/**
 * Roving focus inside a group (WAI-ARIA tabs, radio groups, toolbars, menus): the arrow keys
 * move to the previous or next item (wrapping), Home and End to the first and last. Items are
 * the group's elements marked `data-roving` and not disabled; only the current one should have
 * tabIndex 0, so the whole group is one tab stop. Put it on the group's onKeyDown; it returns
 * the item it focused (null for other keys), e.g. for tabs whose selection follows focus.
 */
export function moveFocus(e: KeyboardEvent<HTMLElement>, orientation: "horizontal" | "vertical" = "horizontal"): HTMLElement | null {
  const back = orientation === "horizontal" ? "ArrowLeft" : "ArrowUp";
  const forward = orientation === "horizontal" ? "ArrowRight" : "ArrowDown";
  if (![back, forward, "Home", "End"].includes(e.key)) return null;
  const items = [...e.currentTarget.querySelectorAll<HTMLElement>("[data-roving]")].filter((el) => !el.hasAttribute("disabled"));
  if (items.length === 0) return null;
  const at = items.findIndex((el) => el === document.activeElement || el.contains(document.activeElement));
  const last = items.length - 1;
  const index = e.key === "Home" ? 0 : e.key === "End" ? last : e.key === forward ? (at + 1) % items.length : at <= 0 ? last : at - 1;
  const next = items[index]!;
  e.preventDefault();
  next.focus();
  return next;
}
