"use client";

import type { ReactNode } from "react";
import { LiveUpdates } from "../live/live-updates";
import { Nav } from "./nav";
import { ConnectionIndicator } from "./connection-indicator";
import { UserMenu } from "./user-menu";

/** The console's frame: left navigation, header with user and live status, content. */
export function Shell({ children }: { children: ReactNode }) {
  return (
    <LiveUpdates>
      {/* The first tab stop: past the navigation to the page (issue 10, WCAG 2.4.1). */}
      <a
        href="#main"
        data-testid="skip-link"
        className="sr-only focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50 focus:rounded-md focus:bg-white focus:px-3 focus:py-2 focus:text-sm focus:font-medium focus:text-brand-700 focus:shadow-lg focus:ring-2 focus:ring-brand-500"
      >
        Skip to content
      </a>
      <div className="flex min-h-screen">
        <aside className="fixed inset-y-0 left-0 z-20 w-56 bg-slate-900">
          <Nav />
        </aside>
        <div className="flex min-w-0 flex-1 flex-col pl-56">
          <header className="sticky top-0 z-10 flex h-14 items-center justify-between border-b border-slate-200 bg-white/90 px-6 backdrop-blur">
            <ConnectionIndicator />
            <UserMenu />
          </header>
          <main id="main" tabIndex={-1} className="mx-auto w-full max-w-[1400px] flex-1 px-6 py-6 focus:outline-none">{children}</main>
        </div>
      </div>
    </LiveUpdates>
  );
}
