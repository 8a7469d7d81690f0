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
      <div className="flex min-h-screen">
        <aside className="fixed inset-y-0 left-0 z-20 w-56 bg-slate-900">
          <Nav />
        </aside>
        <div className="flex min-w-0 flex-1 flex-col pl-56">
          <header className="sticky top-0 z-10 flex h-14 items-center justify-between border-b border-slate-200 bg-white/90 px-6 backdrop-blur">
            <ConnectionIndicator />
            <UserMenu />
          </header>
          <main className="mx-auto w-full max-w-[1400px] flex-1 px-6 py-6">{children}</main>
        </div>
      </div>
    </LiveUpdates>
  );
}
