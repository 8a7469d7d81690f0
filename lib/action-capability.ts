/**
 * Whether a device's agent will refuse an action (issue 10: `exec rm -rf` was approved without a
 * warning and failed only after RUNNING). The agent reports what it runs with every heartbeat
 * (lib/protocol AgentCapabilities); the console warns before creating or approving an action
 * from this answer. Pure; the same words the agent uses when it refuses.
 */
import type { AgentCapabilities } from "./protocol";

type Capabilities = { readonly kinds: readonly string[]; readonly exec?: { readonly allow: readonly string[] } | undefined } | AgentCapabilities;

/** Why the agent will refuse `kind` with `args`, or null when it will run it or nothing is known (an older agent). */
export function agentRefusal(capabilities: Capabilities | null | undefined, kind: string, args: Readonly<Record<string, unknown>>): string | null {
  if (!capabilities) return null;
  if (!capabilities.kinds.includes(kind)) return `its agent does not run "${kind}" actions (it runs ${capabilities.kinds.join(", ") || "none"})`;
  if (kind === "exec" && capabilities.exec) {
    const command = typeof args.command === "string" ? args.command : null;
    if (command !== null && !capabilities.exec.allow.includes(command)) {
      const allowed = capabilities.exec.allow;
      return `command ${JSON.stringify(command)} is not in its agent's allow-list (--allow-exec: ${allowed.length ? allowed.join(", ") : "empty, exec runs nothing"})`;
    }
  }
  return null;
}
