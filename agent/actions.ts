/**
 * The agent's action queue (seed 004, AGENT_PROTOCOL.md "Action reports").
 *
 * Running actions comes in a later issue. Until then the agent holds no actions: it reports
 * an empty queue and leaves offered actions alone (they stay PENDING_SCHEDULE on the
 * server). This module is the one place that will change: an executor takes offered
 * actions (report NEW, then RUNNING, DONE | FAILED), honours `cancel`, journals its queue
 * to the state directory, and lists the queue in every heartbeat.
 */
import type { Logger } from "pino";
import type { AGENT_ACTION_STATES, OfferedAction } from "../lib/protocol";

export type AgentActionState = (typeof AGENT_ACTION_STATES)[number];
export interface QueuedAction {
  id: string;
  state: AgentActionState;
}

export interface ActionExecutor {
  /**
   * Actions offered by a /work answer and ids the operator asked to cancel. Returns true
   * when the executor took any of them; when it took none, the server offers the same ones
   * again at once, so the agent slows its next poll down.
   */
  offer(actions: OfferedAction[], cancel: string[]): Promise<boolean>;
  /** The whole queue, as the heartbeat reports it. */
  queue(): QueuedAction[];
  /** Stops running actions (agent shutdown or decommission). */
  stop(): Promise<void>;
}

/** Takes no actions; logs each offered action once so an operator sees why it waits. */
export class IgnoringExecutor implements ActionExecutor {
  private readonly seen = new Set<string>();

  constructor(private readonly logger: Logger) {}

  async offer(actions: OfferedAction[], cancel: string[]): Promise<boolean> {
    for (const action of actions) {
      if (this.seen.has(action.id)) continue;
      if (this.seen.size > 10_000) this.seen.clear();
      this.seen.add(action.id);
      this.logger.warn({ event: "action.ignored", actionId: action.id, kind: action.kind }, "this agent does not run actions yet");
    }
    if (cancel.length > 0) this.logger.debug({ event: "action.cancel.ignored", ids: cancel }, "cancel for actions this agent does not hold");
    return false;
  }

  queue(): QueuedAction[] {
    return [];
  }

  async stop(): Promise<void> {}
}
