"use client";

import { useCallback, useMemo } from "react";
import { useSearchParams } from "next/navigation";
import { setSearch } from "../hooks/url-state";
import { parsePlanParams, planParamsToSearch, type PlanParams } from "./params";

/** The plans list's state, read from and written to the URL. */
export function usePlanParams() {
  const sp = useSearchParams();
  const params = useMemo(() => parsePlanParams(new URLSearchParams(sp.toString())), [sp]);
  /** A filter change goes back to the first page. */
  const update = useCallback(
    (patch: Partial<PlanParams>) => {
      const next: PlanParams = { ...params, ...patch };
      if (!("cursors" in patch)) next.cursors = [];
      setSearch(planParamsToSearch(next));
    },
    [params],
  );
  return { params, update };
}
