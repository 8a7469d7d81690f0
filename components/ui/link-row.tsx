"use client";

import type { ReactNode } from "react";
import { useRouter } from "next/navigation";
import { cx } from "./cx";

/**
 * A table row that opens `href` when clicked anywhere but on a link or button inside it (those
 * keep their own click), or when a cell already handled the click (`preventDefault`). The row's
 * first cell should still hold a real link, for the keyboard and for opening in a new tab.
 */
export function LinkRow({ href, className, children, ...rest }: { href: string; className?: string | false | undefined; children: ReactNode; "data-testid"?: string }) {
  const router = useRouter();
  return (
    <tr
      {...rest}
      onClick={(e) => {
        if (e.defaultPrevented || (e.target as HTMLElement).closest("a,button")) return;
        router.push(href);
      }}
      className={cx("cursor-pointer border-b border-slate-100 hover:bg-slate-50", className)}
    >
      {children}
    </tr>
  );
}
