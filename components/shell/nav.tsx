"use client";

import { Link } from "@/components/ui/link";
import { usePathname } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useTRPC } from "../trpc";
import { cx } from "../ui/cx";
import { ActionsIcon, ApprovalsIcon, DevicesIcon, EnrollIcon, EventsIcon, KeyIcon, Logo, OverviewIcon, PlansIcon, WorkflowsIcon } from "./icons";
import { FleetsIcon } from "../fleets/fleet-icon";

interface NavItem {
  href: string;
  label: string;
  icon: ReactNode;
  badge?: { count: number; testId: string; title: string };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function isActive(pathname: string, href: string): boolean {
  return href === "/" ? pathname === "/" : pathname === href || pathname.startsWith(`${href}/`);
}

export function Nav() {
  const pathname = usePathname();
  const trpc = useTRPC();
  const counts = useQuery(trpc.devices.counts.queryOptions());
  const actionCounts = useQuery(trpc.actions.counts.queryOptions());
  const pending = counts.data?.pendingEnrollments ?? 0;
  // Decisions, not actions: an exec over 51 devices is one request, decided at once.
  const decisions = actionCounts.data?.pendingDecisions ?? 0;
  const waitingActions = actionCounts.data?.pendingApprovals ?? 0;

  const items: NavItem[] = [
    { href: "/", label: "Overview", icon: <OverviewIcon /> },
    { href: "/devices", label: "Devices", icon: <DevicesIcon /> },
    { href: "/fleets", label: "Fleets", icon: <FleetsIcon /> },
    { href: "/plans", label: "Plans", icon: <PlansIcon /> },
    { href: "/workflows", label: "Workflows", icon: <WorkflowsIcon /> },
    {
      href: "/enrollments",
      label: "Enrollments",
      icon: <EnrollIcon />,
      badge: { count: pending, testId: "nav-pending-enrollments", title: plural(pending, "pending enrollment request") },
    },
    {
      href: "/approvals",
      label: "Approvals",
      icon: <ApprovalsIcon />,
      badge: {
        count: decisions,
        testId: "nav-pending-approvals",
        title: `${plural(decisions, "decision")} waiting${waitingActions !== decisions ? ` (${plural(waitingActions, "action")})` : ""}`,
      },
    },
    { href: "/actions", label: "Actions", icon: <ActionsIcon /> },
    { href: "/events", label: "Events", icon: <EventsIcon /> },
    { href: "/tokens", label: "API tokens", icon: <KeyIcon /> },
  ];

  return (
    <nav className="flex h-full flex-col" aria-label="Main">
      <Link href="/" className="flex items-center gap-2.5 px-4 py-4">
        <Logo />
        <span className="text-[15px] font-semibold tracking-tight text-white">Drover</span>
      </Link>
      <ul className="mt-2 space-y-0.5 px-2">
        {items.map((item) => {
          const active = isActive(pathname, item.href);
          return (
            <li key={item.href}>
              <Link
                href={item.href}
                aria-current={active ? "page" : undefined}
                className={cx(
                  "flex items-center gap-2.5 rounded-md px-2.5 py-2 text-sm font-medium transition-colors",
                  active ? "bg-white/10 text-white" : "text-slate-400 hover:bg-white/5 hover:text-slate-100",
                )}
              >
                {item.icon}
                <span className="flex-1">{item.label}</span>
                {item.badge && item.badge.count > 0 && (
                  <span
                    data-testid={item.badge.testId}
                    className="min-w-5 rounded-full bg-amber-400 px-1.5 text-center text-[11px] leading-5 font-semibold text-slate-900 tabular-nums"
                    title={item.badge.title}
                  >
                    {item.badge.count.toLocaleString()}
                  </span>
                )}
              </Link>
            </li>
          );
        })}
      </ul>
      <div className="mt-auto px-4 py-4 text-[11px] text-slate-400">Fleet orchestration console</div>
    </nav>
  );
}
