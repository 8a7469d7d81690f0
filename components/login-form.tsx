"use client";

import { useEffect, useState, type FormEvent } from "react";
import { useSearchParams } from "next/navigation";
import { authClient } from "./auth-client";
import { safeNext } from "./redirect-to-login";
import { Button } from "./ui/button";
import { InlineError } from "./ui/states";
import { Logo } from "./shell/icons";

const inputClass =
  "block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-xs ring-1 ring-slate-300 ring-inset placeholder:text-slate-500 focus:ring-2 focus:ring-brand-500 focus:outline-none";

function tooManyAttempts(seconds: number | null): string {
  if (!seconds) return "Too many sign-in attempts. Wait a moment and try again.";
  const wait = seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
  return `Too many sign-in attempts. Try again in ${wait}.`;
}

export function LoginForm() {
  const params = useSearchParams();
  const next = safeNext(params.get("next"));
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // Already signed in (e.g. Back after signing in): go straight on.
  useEffect(() => {
    let cancelled = false;
    authClient
      .getSession()
      .then(({ data }) => {
        if (!cancelled && data?.session) window.location.replace(next);
      })
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, [next]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      let retryAfter: number | null = null;
      const { error: failure } = await authClient.signIn.username({
        username: username.trim(),
        password,
        fetchOptions: {
          // Drover's throttle sends Retry-After; better-auth's own limiter X-Retry-After.
          onError: ({ response }) => {
            retryAfter = Number(response.headers.get("retry-after") ?? response.headers.get("x-retry-after")) || null;
          },
        },
      });
      if (failure) {
        setError(
          failure.status === 429
            ? tooManyAttempts(retryAfter)
            : failure.status === 401 || failure.code === "INVALID_USERNAME_OR_PASSWORD"
              ? "Wrong username or password."
              : failure.message || "Sign in failed.",
        );
        setBusy(false);
        return;
      }
      // A full navigation: the console starts fresh with the new session cookie.
      window.location.assign(next);
    } catch {
      setError("Cannot reach the Drover server. Try again in a moment.");
      setBusy(false);
    }
  }

  return (
    <div className="w-full max-w-sm">
      <div className="mb-6 flex flex-col items-center gap-3">
        <Logo className="size-11" />
        <h1 className="text-xl font-semibold tracking-tight text-slate-900">Sign in to Drover</h1>
      </div>
      <form onSubmit={submit} className="space-y-4 rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200" data-testid="login-form">
        {error && <InlineError>{error}</InlineError>}
        <div>
          <label htmlFor="username" className="mb-1 block text-sm font-medium text-slate-700">
            Username
          </label>
          <input
            id="username"
            name="username"
            autoComplete="username"
            autoFocus
            required
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            className={inputClass}
          />
        </div>
        <div>
          <label htmlFor="password" className="mb-1 block text-sm font-medium text-slate-700">
            Password
          </label>
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            className={inputClass}
          />
        </div>
        <Button type="submit" variant="primary" className="w-full" disabled={busy || !username || !password}>
          {busy ? "Signing in…" : "Sign in"}
        </Button>
      </form>
      <p className="mt-4 text-center text-xs text-slate-600">Accounts are created by an administrator.</p>
    </div>
  );
}
