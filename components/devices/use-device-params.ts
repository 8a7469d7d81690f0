"use client";

import { useCallback, useMemo } from "react";
import { useSearchParams } from "next/navigation";
import { setSearch } from "../hooks/url-state";
import { deviceParamsToSearch, parseDeviceParams, type DeviceParams } from "./params";

/** The devices page's state, read from and written to the URL. */
export function useDeviceParams() {
  const sp = useSearchParams();
  const params = useMemo(() => parseDeviceParams(new URLSearchParams(sp.toString())), [sp]);

  /**
   * Applies a change. Filter changes go back to the first page; typing replaces the history
   * entry (so Back does not step through keystrokes), clicks push one.
   */
  const update = useCallback(
    (patch: Partial<DeviceParams>, opts: { replace?: boolean } = {}) => {
      const next: DeviceParams = { ...params, ...patch };
      if (!("cursors" in patch)) next.cursors = [];
      setSearch(deviceParamsToSearch(next), opts);
    },
    [params],
  );

  return { params, update };
}
