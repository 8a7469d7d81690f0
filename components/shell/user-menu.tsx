"use client";

import { useState } from "react";
import { authClient } from "../auth-client";
import { useMe } from "../hooks/use-me";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Skeleton } from "../ui/skeleton";

export function UserMenu() {
  const { me } = useMe();
  const [signingOut, setSigningOut] = useState(false);

  async function signOut() {
    setSigningOut(true);
    try {
      await authClient.signOut();
    } finally {
      window.location.assign("/login");
    }
  }

  return (
    <div className="flex shrink-0 items-center gap-2 sm:gap-3">
      {me ? (
        <span className="flex items-center gap-2 text-sm" data-testid="current-user">
          <span aria-hidden title={`${me.username} (${me.role})`} className="flex size-7 items-center justify-center rounded-full bg-slate-200 text-xs font-semibold text-slate-700 uppercase">
            {me.username.slice(0, 2)}
          </span>
          <span className="sr-only font-medium text-slate-800 sm:not-sr-only">{me.username}</span>
          <Badge tone={me.role === "admin" ? "purple" : me.role === "operator" ? "blue" : "gray"} dot={false} className="max-sm:sr-only" data-testid="current-role">
            {me.role}
          </Badge>
        </span>
      ) : (
        <Skeleton className="h-5 w-32" />
      )}
      <Button size="sm" variant="ghost" onClick={signOut} disabled={signingOut} data-testid="sign-out">
        {signingOut ? "Signing out…" : "Sign out"}
      </Button>
    </div>
  );
}
