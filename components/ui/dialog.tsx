"use client";

import { useEffect, useRef, type ReactNode } from "react";
import { cx } from "./cx";

/** A modal on the native <dialog>: focus trap, Escape and backdrop come with it. */
export function Dialog({
  open,
  onClose,
  title,
  children,
  footer,
  size = "md",
  ...rest
}: {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
  /** md for confirmations, lg for forms. */
  size?: "md" | "lg";
  "data-testid"?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      onClose={onClose}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onClick={(e) => {
        if (e.target === ref.current) onClose();
      }}
      className={cx("m-auto w-full rounded-xl bg-white p-0 text-slate-900 shadow-2xl ring-1 ring-slate-900/10", size === "lg" ? "max-w-[min(42rem,calc(100%-1.5rem))]" : "max-w-[min(28rem,calc(100%-1.5rem))]")}
      {...rest}
    >
      {open && (
        <div>
          <div className="border-b border-slate-100 px-5 py-4">
            <h2 className="text-base font-semibold">{title}</h2>
          </div>
          <div className="px-5 py-4 text-sm text-slate-600">{children}</div>
          {footer && <div className="flex flex-wrap justify-end gap-2 rounded-b-xl bg-slate-50 px-5 py-3">{footer}</div>}
        </div>
      )}
    </dialog>
  );
}
