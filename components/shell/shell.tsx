"use client";

import { useEffect, useRef, useState, type MouseEvent, type ReactNode } from "react";
import { LiveUpdates } from "../live/live-updates";
import { cx } from "../ui/cx";
import { Nav } from "./nav";
import { PlainHttpBanner } from "./plain-http-banner";
import { ConnectionIndicator } from "./connection-indicator";
import { ThemeToggle } from "./theme-toggle";
import { UserMenu } from "./user-menu";

/**
 * The console's frame: left navigation, header with user and live status, content. Below
 * 1024 px the navigation folds behind a menu button (issue 10: at 768 px the pages need the
 * width) and opens over the page; Escape, the backdrop or following a link closes it.
 */
export function Shell({ children }: { children: ReactNode }) {
  const [navOpen, setNavOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const aside = useRef<HTMLElement>(null);

  useEffect(() => {
    if (!navOpen) return;
    const links = aside.current;
    (links?.querySelector<HTMLElement>("a[aria-current=page]") ?? links?.querySelector<HTMLElement>("a"))?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setNavOpen(false);
      menuButton.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [navOpen]);

  const closeOnLink = (e: MouseEvent) => {
    if ((e.target as Element).closest("a")) setNavOpen(false);
  };

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
        {navOpen && <div aria-hidden className="fixed inset-0 z-30 bg-slate-900/40 lg:hidden" onClick={() => setNavOpen(false)} />}
        {/* Dark in both themes: the original palette inside (app/dark-palette.css). */}
        <aside
          ref={aside}
          id="console-nav"
          data-testid="sidebar"
          onClick={closeOnLink}
          className={cx("palette-light fixed inset-y-0 left-0 z-40 w-56 bg-slate-900 shadow-xl lg:z-20 lg:block lg:shadow-none", navOpen ? "block" : "hidden")}
        >
          <Nav />
        </aside>
        <div className="flex min-w-0 flex-1 flex-col lg:pl-56">
          <header className="sticky top-0 z-10 flex h-14 items-center justify-between gap-2 sm:gap-3 border-b border-slate-200 bg-white/90 px-4 backdrop-blur lg:px-6">
            <div className="flex min-w-0 items-center gap-3">
              <button
                ref={menuButton}
                type="button"
                data-testid="nav-toggle"
                aria-label="Menu"
                aria-expanded={navOpen}
                aria-controls="console-nav"
                onClick={() => setNavOpen((o) => !o)}
                className="-ml-1 flex size-9 shrink-0 items-center justify-center rounded-md text-slate-700 hover:bg-slate-100 focus-visible:ring-2 focus-visible:ring-brand-500 focus-visible:outline-none lg:hidden"
              >
                <svg viewBox="0 0 20 20" fill="none" stroke="currentColor" strokeWidth={1.8} strokeLinecap="round" className="size-5" aria-hidden>
                  <path d="M3 5.5h14M3 10h14M3 14.5h14" />
                </svg>
              </button>
              <ConnectionIndicator />
            </div>
            <div className="flex shrink-0 items-center gap-2 sm:gap-3">
              <ThemeToggle />
              <UserMenu />
            </div>
          </header>
          <PlainHttpBanner />
          <main id="main" tabIndex={-1} className="mx-auto w-full max-w-[1400px] flex-1 px-4 py-6 focus:outline-none lg:px-6">
            {children}
          </main>
        </div>
      </div>
    </LiveUpdates>
  );
}
