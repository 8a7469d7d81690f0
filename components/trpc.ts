/**
 * The console's typed tRPC hooks. Only the router's *type* crosses the boundary: nothing
 * from server/ is bundled into the browser.
 */
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { TRPCClientError } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/router";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type RouterInputs = inferRouterInputs<AppRouter>;

export type DeviceListItem = RouterOutputs["devices"]["list"]["items"][number];
export type DeviceDetail = RouterOutputs["devices"]["get"];
export type DeviceCounts = RouterOutputs["devices"]["counts"];
export type EventRow = RouterOutputs["events"]["list"][number];
export type Enrollment = RouterOutputs["enrollments"]["list"][number];
export type ActionListItem = RouterOutputs["actions"]["list"]["items"][number];
export type ActionDetail = RouterOutputs["actions"]["get"];
export type ActionPreview = RouterOutputs["actions"]["preview"];
export type Me = RouterOutputs["auth"]["me"];
export type Role = Me["role"];
export type ObjectKind = NonNullable<RouterInputs["events"]["list"]["kind"]>;

/** The tRPC error code of a failed call, if it came from the server. */
export function trpcErrorCode(error: unknown): string | null {
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data as { code?: string } | undefined;
    return data?.code ?? null;
  }
  return null;
}

/** A message fit to show a person. */
export function errorMessage(error: unknown): string {
  if (error instanceof TRPCClientError) {
    if (error.message === "Failed to fetch" || /fetch failed|NetworkError/i.test(error.message)) {
      return "Cannot reach the Drover server.";
    }
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
