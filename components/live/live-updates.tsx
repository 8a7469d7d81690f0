"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { trpcErrorCode, useTRPC } from "../trpc";
import { redirectToLogin } from "../redirect-to-login";
import { targetId, targetsFor, type InvalidationTarget } from "./invalidation";

export type LiveState = "connecting" | "live" | "reconnecting";

interface LiveContextValue {
  state: LiveState;
  /** Names of devices that changed in the last few seconds, for a brief highlight. */
  recentlyChanged: ReadonlySet<string>;
}

const LiveContext = createContext<LiveContextValue>({ state: "connecting", recentlyChanged: new Set() });

export function useLive(): LiveContextValue {
  return useContext(LiveContext);
}

const FLUSH_MS = 150;
const RESUBSCRIBE_MS = 2_000;
const HIGHLIGHT_MS = 2_000;

/**
 * One `events.live` subscription for the whole console. Each event invalidates the queries
 * it concerns; after a lost connection every active query is refetched once.
 */
export function LiveUpdates({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const pending = useRef(new Map<string, InvalidationTarget>());
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const lastEventId = useRef<number | null>(null);
  const connectedBefore = useRef(false);
  const [hasConnected, setHasConnected] = useState(false);
  const [resumeFrom, setResumeFrom] = useState<number | null>(null);
  const [recentlyChanged, setRecentlyChanged] = useState<ReadonlySet<string>>(new Set());
  const changedTimers = useRef(new Map<string, ReturnType<typeof setTimeout>>());

  const flush = useCallback(() => {
    timer.current = null;
    const targets = [...pending.current.values()];
    pending.current.clear();
    for (const t of targets) {
      switch (t.kind) {
        case "devices.list":
          void queryClient.invalidateQueries(trpc.devices.list.pathFilter());
          break;
        case "devices.counts":
          void queryClient.invalidateQueries(trpc.devices.counts.pathFilter());
          break;
        case "device":
          void queryClient.invalidateQueries(trpc.devices.get.queryFilter({ name: t.name }));
          void queryClient.invalidateQueries(trpc.devices.events.queryFilter({ name: t.name }));
          break;
        case "enrollments.list":
          void queryClient.invalidateQueries(trpc.enrollments.list.pathFilter());
          break;
        case "events.list":
          void queryClient.invalidateQueries(trpc.events.list.pathFilter());
          break;
      }
    }
  }, [queryClient, trpc]);

  const markChanged = useCallback((name: string) => {
    const timers = changedTimers.current;
    const existing = timers.get(name);
    if (existing) clearTimeout(existing);
    timers.set(
      name,
      setTimeout(() => {
        timers.delete(name);
        setRecentlyChanged((prev) => {
          const next = new Set(prev);
          next.delete(name);
          return next;
        });
      }, HIGHLIGHT_MS),
    );
    setRecentlyChanged((prev) => (prev.has(name) ? prev : new Set(prev).add(name)));
  }, []);

  const subscription = useSubscription(
    trpc.events.live.subscriptionOptions(
      { lastEventId: resumeFrom },
      {
        onData(tracked) {
          const event = tracked.data;
          lastEventId.current = event.id;
          for (const t of targetsFor(event)) pending.current.set(targetId(t), t);
          if (event.objectKind === "Device") markChanged(event.objectName);
          timer.current ??= setTimeout(flush, FLUSH_MS);
        },
        onError(error) {
          if (trpcErrorCode(error) === "UNAUTHORIZED") redirectToLogin();
        },
      },
    ),
  );

  const status = subscription.status;
  const { reset } = subscription;

  // Connected again after a loss: whatever happened meanwhile, refetch what is on screen.
  useEffect(() => {
    if (status !== "pending") return;
    if (connectedBefore.current) void queryClient.invalidateQueries({ refetchType: "active" });
    connectedBefore.current = true;
    setHasConnected(true);
  }, [status, queryClient]);

  // A subscription that ended in error (the stream was closed for good): start a new one,
  // resuming after the last event seen.
  useEffect(() => {
    if (status !== "error") return;
    const t = setTimeout(() => {
      if (lastEventId.current !== resumeFrom) setResumeFrom(lastEventId.current);
      else reset();
    }, RESUBSCRIBE_MS);
    return () => clearTimeout(t);
  }, [status, reset, resumeFrom]);

  useEffect(() => {
    const timers = changedTimers.current;
    return () => {
      if (timer.current) clearTimeout(timer.current);
      for (const t of timers.values()) clearTimeout(t);
    };
  }, []);

  const state: LiveState = status === "pending" ? "live" : hasConnected || status === "error" ? "reconnecting" : "connecting";
  const value = useMemo(() => ({ state, recentlyChanged }), [state, recentlyChanged]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}
