"use client";

import { useCallback, useMemo } from "react";
import { useSearchParams } from "next/navigation";
import { setSearch } from "../hooks/url-state";
import { actionParamsToSearch, parseActionParams, type ActionParams } from "./params";

/** The actions list's (or the inbox's) state, read from and written to the URL. */
export function useActionParams() {
  const sp = useSearchParams();
  const params = useMemo(() => parseActionParams(new URLSearchParams(sp.toString())), [sp]);

  /** Filter changes go back to the first page; typing replaces the history entry, clicks push one. */
  const update = useCallback(
    (patch: Partial<ActionParams>, opts: { replace?: boolean } = {}) => {
      const next: ActionParams = { ...params, ...patch };
      if (!("cursors" in patch)) next.cursors = [];
      setSearch(actionParamsToSearch(next), opts);
    },
    [params],
  );

  return { params, update };
}
