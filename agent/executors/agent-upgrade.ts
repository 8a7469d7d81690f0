/**
 * `agentupgrade {version}` (issue 12): the agent replaces itself with that build from its
 * server (../upgrade.ts) and restarts. Like a real reboot, the restart is the proof: the run
 * never returns once the new file is in place; the agent stops with the action RUNNING, and
 * the next start, finding the upgrade journaled as done since the action started, reports it
 * DONE (recover). A restart that came back on another version, or any other restart, is
 * FAILED. A failed download or check fails the action with why, the old agent still running.
 */
import { AGENT_UPGRADE_KIND, AgentUpgradeArgs } from "../../lib/agent-version";
import type { Upgrader } from "../upgrade";
import { UpgradeError } from "../upgrade";
import { ActionFailure, type ActionResult, type Executor } from "./types";

export function agentUpgradeExecutor(upgrader: Upgrader): Executor<typeof AgentUpgradeArgs> {
  return {
    kind: AGENT_UPGRADE_KIND,
    idempotent: false,
    argsSchema: AgentUpgradeArgs,
    async run(args, { signal, log }) {
      if (!upgrader.differs(args.version)) return { output: `this agent already runs ${args.version}\n` };
      try {
        await upgrader.upgrade(args.version, signal);
      } catch (error) {
        if (error instanceof UpgradeError) throw new ActionFailure(error.message);
        throw error;
      }
      log.info({ event: "upgrade.action", version: args.version }, "agent file replaced; the restart reports the outcome");
      // The agent is stopping; this stays RUNNING until the next start says how it went.
      return new Promise<ActionResult>((_, reject) => {
        if (signal.aborted) reject(new ActionFailure("cancelled"));
        signal.addEventListener("abort", () => reject(new ActionFailure("cancelled")), { once: true });
      });
    },
    recover(startedAt: Date): ActionResult | null {
      const last = upgrader.last;
      if (last?.state !== "done" || Date.parse(last.at) < startedAt.getTime()) return null;
      return { output: `${last.info ?? `upgraded from ${last.from} to ${last.to}`}; running ${upgrader.version} since the restart\n` };
    },
  };
}
