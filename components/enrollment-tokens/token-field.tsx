"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Field } from "../ui/field";

/** Which enrollment token a request came with (issue 12), in a detail page's definition list. */
export function EnrollmentTokenField({ tokenId }: { tokenId: string | null }) {
  const trpc = useTRPC();
  const token = useQuery(trpc.enrollmentTokens.get.queryOptions({ id: tokenId ?? "" }, { enabled: tokenId !== null, staleTime: 60_000 }));
  return (
    <Field label="Enrollment token">
      {tokenId === null ? (
        <span className="text-slate-500">none</span>
      ) : (
        <Link href="/enrollment-tokens" className="text-brand-700 hover:underline" data-testid="enrollment-token-used" title={tokenId}>
          {token.data ? (
            <>
              {token.data.name} <span className="font-mono text-xs text-slate-600">({token.data.prefix}…)</span>
              {token.data.status === "Revoked" && <span className="text-slate-600"> · revoked</span>}
            </>
          ) : (
            <span className="font-mono text-xs">{tokenId}</span>
          )}
        </Link>
      )}
    </Field>
  );
}
