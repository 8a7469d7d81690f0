"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";

/**
 * Heartbeats that change no status write no event, so `lastSeen` is not pushed live; pages
 * that show it refetch once per heartbeat interval instead (only while the tab is visible).
 */
export function useHeartbeatInterval(): number {
  const trpc = useTRPC();
  const settings = useQuery(trpc.system.settings.queryOptions(undefined, { staleTime: 10 * 60_000 }));
  const seconds = settings.data?.heartbeatSeconds ?? 30;
  return Math.min(60, Math.max(5, seconds)) * 1000;
}
