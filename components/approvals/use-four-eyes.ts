"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";

/**
 * Four eyes in the console (issue 21, DROVER_FOUR_EYES=1): why the signed-in operator may not
 * approve something they requested, or null. Only what says so itself (`createdBy: user:<you>`)
 * is known here; a plan's or workflow's actions are refused by the server, whose 403 the dialog
 * shows.
 */
export function useFourEyes(): (createdBy: string | null | undefined, what?: string) => string | null {
  const trpc = useTRPC();
  const { me } = useMe();
  const settings = useQuery(trpc.system.settings.queryOptions(undefined, { staleTime: 10 * 60_000 }));
  const on = settings.data?.fourEyes === true;
  return (createdBy, what = "this") =>
    on && me && createdBy === `user:${me.username}` ? `Four eyes: you requested ${what}, so another operator must approve it.` : null;
}
