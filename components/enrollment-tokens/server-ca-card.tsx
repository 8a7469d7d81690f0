"use client";

import { useRef } from "react";
import { Card, CardHeader } from "../ui/card";
import { CopyButton } from "../ui/copy-button";

/**
 * The server's own CA (issue 23): what devices pin. The install line carries its fingerprint;
 * this card is for checking it by another path (the server's start log prints it too) and for
 * agents installed by hand (`--ca-fingerprint`, or `--ca-file` with /ca.pem).
 */
export function ServerCaCard({ fingerprint }: { fingerprint: string }) {
  const shown = useRef<HTMLElement>(null);
  return (
    <Card className="mb-5" data-testid="server-ca-card">
      <CardHeader
        title="This server's certificate authority"
        description="Devices trust this CA alone for this server: the install command checks its SHA-256 before it trusts anything, and the agent keeps it pinned."
        actions={
          <a href="/ca.pem" download="drover-ca.pem" className="text-sm font-medium text-brand-700 hover:underline">
            Download ca.pem
          </a>
        }
      />
      <div className="flex items-center justify-between gap-3 px-4 py-3">
        <div className="min-w-0 text-xs">
          <span className="font-medium text-slate-700">SHA-256 fingerprint</span>
          <code ref={shown} data-testid="server-ca-fingerprint" className="mt-1 block font-mono break-all text-slate-800">
            {fingerprint}
          </code>
        </div>
        <CopyButton text={fingerprint} shown={shown} testId="server-ca-fingerprint-copy" label="CA fingerprint" />
      </div>
    </Card>
  );
}
