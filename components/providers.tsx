"use client";

import { useState, type ReactNode } from "react";
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import type { AppRouter } from "@/server/trpc/router";
import { TRPCProvider, trpcErrorCode } from "./trpc";
import { redirectToLogin } from "./redirect-to-login";

/** Errors that a retry cannot fix. */
const FINAL_CODES = new Set(["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST", "CONFLICT", "PAYLOAD_TOO_LARGE"]);

function onError(error: unknown) {
  if (trpcErrorCode(error) === "UNAUTHORIZED") redirectToLogin();
}

function makeQueryClient() {
  return new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        // Live events keep data fresh; no polling, no refetch storms on focus.
        staleTime: 30_000,
        refetchOnWindowFocus: false,
        retry: (failures, error) => !FINAL_CODES.has(trpcErrorCode(error) ?? "") && failures < 3,
        retryDelay: (attempt) => Math.min(500 * 2 ** attempt, 5_000),
      },
      mutations: { retry: false },
    },
  });
}

function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url: "/api/trpc" }),
        false: httpBatchLink({ url: "/api/trpc", maxURLLength: 4000 }),
      }),
    ],
  });
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(makeTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
