"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useQueryClient, type QueryFilters } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { trpcErrorCode, useTRPC } from "../trpc";
import { redirectToLogin } from "../redirect-to-login";
import { settleDelayMs, targetId, targetsFor, type InvalidationTarget } from "./invalidation";

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
  const changedTimers = useRef(new Set<ReturnType<typeof setTimeout>>());

  const changedNames = useRef(new Set<string>());

  const filtersFor = useCallback(
    (t: InvalidationTarget): QueryFilters[] => {
      switch (t.kind) {
        case "devices.list":
          return [trpc.devices.list.pathFilter()];
        case "devices.counts":
          return [trpc.devices.counts.pathFilter()];
        case "device":
          return [trpc.devices.get.queryFilter({ name: t.name }), trpc.devices.events.queryFilter({ name: t.name })];
        case "enrollments.list":
          // An open enrollment page too: the event names the device, not the request's id.
          return [trpc.enrollments.list.pathFilter(), trpc.enrollments.get.pathFilter()];
        case "events.list":
          return [trpc.events.list.pathFilter()];
        case "actions.list":
          return [trpc.actions.list.pathFilter()];
        case "actions.counts":
          return [trpc.actions.counts.pathFilter()];
        case "action":
          return [trpc.actions.get.queryFilter({ id: t.id }), trpc.actions.events.queryFilter({ id: t.id })];
        case "fleets.list":
          return [trpc.fleets.list.pathFilter()];
        case "fleet":
          return [trpc.fleets.get.queryFilter({ name: t.name }), trpc.fleets.templateVersions.queryFilter({ name: t.name }), trpc.fleets.events.queryFilter({ name: t.name })];
        case "fleets.status":
          return [trpc.fleets.list.pathFilter(), trpc.fleets.get.pathFilter()];
        case "plans.list":
          return [trpc.plans.list.pathFilter()];
        case "plan":
          return [trpc.plans.get.queryFilter({ id: t.id }), trpc.plans.events.queryFilter({ id: t.id })];
        case "plans.actions":
          return [trpc.plans.get.pathFilter()];
        case "workflows.list":
          return [trpc.workflows.list.pathFilter()];
        case "workflow":
          return [trpc.workflows.get.queryFilter({ name: t.name }), trpc.workflows.events.queryFilter({ name: t.name }), trpc.workflows.targets.pathFilter(), trpc.workflows.targetOutputs.pathFilter()];
        case "workflows.actions":
          return [trpc.workflows.get.pathFilter(), trpc.workflows.targets.pathFilter(), trpc.workflows.targetOutputs.pathFilter()];
        case "requests":
          return [trpc.requests.list.pathFilter(), trpc.requests.get.pathFilter(), trpc.requests.outputs.pathFilter()];
      }
    },
    [trpc],
  );

  const flushRef = useRef<() => void>(() => undefined);
  // Targets that wait for the server to settle (settleDelayMs): one timer per target, fired
  // again after the delay when more events came meanwhile, so the last one is always followed.
  const settling = useRef(new Map<string, { timer: ReturnType<typeof setTimeout>; again: boolean }>());
  const addTarget = useCallback((t: InvalidationTarget) => {
    const id = targetId(t);
    const delay = settleDelayMs(t);
    if (delay <= 0) {
      pending.current.set(id, t);
      return;
    }
    const current = settling.current.get(id);
    if (current) {
      current.again = true;
      return;
    }
    const fire = () => {
      pending.current.set(id, t);
      timer.current ??= setTimeout(() => flushRef.current(), 0);
      const s = settling.current.get(id);
      if (s?.again) {
        s.again = false;
        s.timer = setTimeout(fire, delay);
      } else settling.current.delete(id);
    };
    settling.current.set(id, { timer: setTimeout(fire, delay), again: false });
  }, []);
  const flush = useCallback(() => {
    timer.current = null;
    const targets = [...pending.current.values()];
    pending.current.clear();
    for (const t of targets) {
      const filters = filtersFor(t);
      // At most one request in flight per query: while one runs, keep the target for the
      // next batch rather than cancelling it (a steady stream of events must not starve it).
      if (filters.some((f) => queryClient.isFetching(f) > 0)) {
        pending.current.set(targetId(t), t);
        continue;
      }
      for (const f of filters) void queryClient.invalidateQueries(f);
    }
    if (pending.current.size) timer.current = setTimeout(() => flushRef.current(), FLUSH_MS);
    // One state update per batch, however many devices changed in it.
    const names = [...changedNames.current];
    changedNames.current.clear();
    if (names.length) {
      setRecentlyChanged((prev) => new Set([...prev, ...names]));
      const t = setTimeout(() => {
        changedTimers.current.delete(t);
        setRecentlyChanged((prev) => {
          const next = new Set(prev);
          for (const n of names) next.delete(n);
          return next;
        });
      }, HIGHLIGHT_MS);
      changedTimers.current.add(t);
    }
  }, [queryClient, filtersFor]);
  useEffect(() => {
    flushRef.current = flush;
  }, [flush]);

  const subscription = useSubscription(
    trpc.events.live.subscriptionOptions(
      { lastEventId: resumeFrom },
      {
        onData(tracked) {
          const event = tracked.data;
          lastEventId.current = event.id;
          for (const t of targetsFor(event)) addTarget(t);
          if (event.objectKind === "Device") changedNames.current.add(event.objectName);
          timer.current ??= setTimeout(() => flushRef.current(), FLUSH_MS);
        },
        onError(error) {
          if (trpcErrorCode(error) === "UNAUTHORIZED") redirectToLogin();
        },
      },
    ),
  );

  const status = subscription.status;
  const { reset } = subscription;

  // Connected, first or again after a loss: whatever happened before the stream was open
  // (the page's first fetch may have answered before it), refetch what is on screen. On the
  // first connect only queries that already answered: one still in flight reads fresh data.
  useEffect(() => {
    if (status !== "pending") return;
    if (connectedBefore.current) void queryClient.invalidateQueries({ refetchType: "active" });
    else void queryClient.invalidateQueries({ refetchType: "active", predicate: (q) => q.state.dataUpdatedAt > 0 && q.state.fetchStatus === "idle" });
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
    const settlingTimers = settling.current;
    return () => {
      if (timer.current) clearTimeout(timer.current);
      for (const t of timers) clearTimeout(t);
      for (const s of settlingTimers.values()) clearTimeout(s.timer);
    };
  }, []);

  const state: LiveState = status === "pending" ? "live" : hasConnected || status === "error" ? "reconnecting" : "connecting";
  const value = useMemo(() => ({ state, recentlyChanged }), [state, recentlyChanged]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}
