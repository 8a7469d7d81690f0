"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC, type Me } from "../trpc";

/** The signed-in user. Mutating controls show only once the role is known to allow them. */
export function useMe(): { me: Me | undefined; canOperate: boolean; isAdmin: boolean } {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.auth.me.queryOptions(undefined, { staleTime: 5 * 60_000 }));
  return {
    me: data,
    canOperate: data?.role === "operator" || data?.role === "admin",
    isAdmin: data?.role === "admin",
  };
}
