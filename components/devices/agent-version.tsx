"use client";

import { useQuery } from "@tanstack/react-query";
import { agentUnsupported } from "@/lib/agent-version";
import { useTRPC } from "../trpc";

/**
 * A device's agent version, flagged when it is older than this server supports
 * (DROVER_MIN_AGENT_VERSION, issue 12). The minimum comes with the server's settings, one
 * cached query for every row.
 */
export function AgentVersionText({ version, testId, compact = false }: { version: string; testId?: string; compact?: boolean }) {
  const trpc = useTRPC();
  const settings = useQuery(trpc.system.settings.queryOptions(undefined, { staleTime: 10 * 60_000 }));
  const minimum = settings.data?.minAgentVersion;
  const unsupported = agentUnsupported(version, minimum);
  return (
    <span data-testid={testId}>
      {compact ? version || "—" : <code className="text-[13px]">{version || "—"}</code>}
      {unsupported && (
        <span className="ml-1.5 rounded whitespace-nowrap bg-amber-50 px-1.5 py-0.5 text-xs font-medium text-amber-800 ring-1 ring-amber-200" title={`This server supports agents from ${minimum} on: upgrade it (a fleet template's agent.version, or an agentupgrade action).`}>
          older than supported ({minimum}+)
        </span>
      )}
    </span>
  );
}
