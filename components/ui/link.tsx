"use client";

import NextLink from "next/link";
import { useRouter } from "next/navigation";
import type { ComponentProps } from "react";

/**
 * The console's link. Its page is prefetched when the pointer or keyboard focus comes to it, not
 * when it scrolls into view as Next's does: every page view prefetched each page it linked to, a
 * render on the server and that page's JavaScript in the browser each (the sidebar alone made 22
 * requests and 0.7 MB per view; a page load 0.26 → 0.09 server CPU-s without them; issue 20). The
 * pages fetch their data live, so an early prefetch buys little. An explicit `prefetch` is Next's
 * own behaviour.
 */
export function Link({ prefetch, onPointerEnter, onFocus, ...props }: ComponentProps<typeof NextLink>) {
  const router = useRouter();
  if (prefetch !== undefined) return <NextLink prefetch={prefetch} onPointerEnter={onPointerEnter} onFocus={onFocus} {...props} />;
  const warm = () => {
    if (typeof props.href === "string") router.prefetch(props.href);
  };
  return (
    <NextLink
      {...props}
      prefetch={false}
      onPointerEnter={(e) => {
        warm();
        onPointerEnter?.(e);
      }}
      onFocus={(e) => {
        warm();
        onFocus?.(e);
      }}
    />
  );
}
