"use client";

import { useQuery } from "@tanstack/react-query";
import { useMe } from "../hooks/use-me";
import { useTRPC } from "../trpc";

/**
 * For admins (issue 23): this server speaks plain HTTP on an address other machines reach, so
 * tokens, cookies and the install script cross the network in the clear.
 */
export function PlainHttpBanner() {
  const trpc = useTRPC();
  const { isAdmin } = useMe();
  const settings = useQuery(trpc.system.settings.queryOptions(undefined, { staleTime: 10 * 60_000, enabled: isAdmin }));
  if (!isAdmin || !settings.data?.tls.plainBeyondLoopback) return null;
  return (
    <div role="alert" data-testid="plain-http-banner" className="border-b border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-900 lg:px-6">
      <strong className="font-semibold">Plain HTTP beyond this machine.</strong> Tokens, session cookies and the install script cross the network in the clear. Set{" "}
      <code className="rounded bg-amber-100 px-1">DROVER_TLS_CERT</code> and <code className="rounded bg-amber-100 px-1">DROVER_TLS_KEY</code>, or listen on loopback only (
      <code className="rounded bg-amber-100 px-1">HOST=127.0.0.1</code>).
    </div>
  );
}
