"use client";

import { useRef } from "react";
import { Button } from "../ui/button";
import { CopyButton } from "../ui/copy-button";
import { Card, CardHeader } from "../ui/card";
import { LabelChips } from "../ui/label-chips";
import type { CreatedEnrollmentToken } from "./types";
import { installCommands } from "@/lib/install-command";

/** One command in a block with its Copy button. */
function CommandBlock({ label, command, testId }: { label: string; command: string; testId: string }) {
  const code = useRef<HTMLElement>(null);
  return (
    <div className="space-y-1.5">
      <div className="flex items-center justify-between gap-2">
        <span className="text-xs font-medium text-slate-700">{label}</span>
        <CopyButton text={command} shown={code} testId={testId} label={label} />
      </div>
      <pre tabIndex={0} aria-label={label} className="overflow-x-auto rounded-md bg-slate-50 p-3 font-mono text-xs leading-5 whitespace-pre-wrap break-all text-slate-800 ring-1 ring-slate-200 ring-inset">
        <code ref={code} data-testid={testId}>
          {command}
        </code>
      </pre>
    </div>
  );
}

/**
 * What to run on the device, with the new token in it: the only time the secret is shown (the
 * server keeps its hash). The one-liner installs the agent as a systemd service; the others are
 * for a machine without systemd, or to run the agent by hand.
 */
export function InstallCommand({ created, server, caFingerprint, onDone }: { created: CreatedEnrollmentToken; server: string; caFingerprint: string | null; onDone: () => void }) {
  // Pinned to the server's own CA when it has one (issue 23, lib/install-command.ts).
  const { service: oneLine, noService, byHand, uninstall } = installCommands(server, created.token, caFingerprint);
  return (
    <Card className="mb-5 ring-2 ring-brand-500/40" data-testid="install-command-card">
      <CardHeader
        title={`Token “${created.name}” created: install the agent`}
        description="Run this on each Linux machine to add. Copy it now: the token is shown only once, and the server keeps only its hash."
        actions={
          <Button size="sm" data-testid="install-command-done" onClick={onDone}>
            Done
          </Button>
        }
      />
      <div className="space-y-4 px-4 py-4 text-sm">
        <CommandBlock label="Install as a service (systemd)" command={oneLine} testId="install-command" />
        <dl className="flex flex-wrap gap-x-6 gap-y-1 text-xs text-slate-600">
          <div className="flex items-center gap-1.5">
            <dt>Devices get</dt>
            <dd>
              <LabelChips labels={created.labels} />
            </dd>
          </div>
          <div className="flex gap-1.5">
            <dt>Approval</dt>
            <dd className="font-medium text-slate-800">{created.autoApprove ? "at once" : "by an operator, in Enrollments"}</dd>
          </div>
          <div className="flex gap-1.5">
            <dt>Uses</dt>
            <dd className="font-medium text-slate-800">{created.maxUses ?? "no limit"}</dd>
          </div>
          <div className="flex gap-1.5">
            <dt>Expires</dt>
            <dd className="font-medium text-slate-800">{created.expiresAt ? new Date(created.expiresAt).toLocaleString() : "never"}</dd>
          </div>
        </dl>
        <details className="group">
          <summary className="cursor-pointer text-xs font-medium text-brand-700 hover:underline">Without systemd, or by hand</summary>
          <div className="mt-3 space-y-4">
            <CommandBlock label="Install without a service (prints how to start it)" command={noService} testId="install-command-no-service" />
            <CommandBlock label="Run the agent by hand (Node.js 20 or newer)" command={byHand} testId="install-command-manual" />
            <p className="text-xs text-slate-500">
              Remove an installed agent with <code className="rounded bg-slate-100 px-1 text-slate-700">{uninstall}</code> (add{" "}
              <code className="rounded bg-slate-100 px-1 text-slate-700">--purge</code> to remove its state too).
            </p>
          </div>
        </details>
      </div>
    </Card>
  );
}
