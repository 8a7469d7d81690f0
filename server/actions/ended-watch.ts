/**
 * The controllers that signal devices through actions (plans, workflows) move on when those
 * actions end. This watches the event bus for actions reaching a final state and hands their
 * ids, a burst at a time (debounced: the actions that end in one `delayMs` window are one
 * call), to the controller, which maps them to its own objects and runs their passes.
 */
import type { ServerContext } from "../context";
import { topics } from "../bus";
import type { EventRow } from "../events/events";
import { FINAL_ACTION_STATES } from "../../lib/action-status";

const FINAL = new Set<string>(FINAL_ACTION_STATES);

export function watchEndedActions(ctx: ServerContext, name: string, onEnded: (actionIds: string[]) => Promise<void>, delayMs = 100): { stop(): void } {
  const actionIds = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const run = async () => {
    timer = null;
    if (stopped) return;
    const ids = [...actionIds];
    actionIds.clear();
    await onEnded(ids);
  };
  const off = ctx.bus.subscribe<EventRow>(topics.events, (row) => {
    if (row.objectKind !== "Action" || !FINAL.has(row.reason) || (row.type !== "ActionStateChanged" && row.type !== "ActionOverwritten")) return;
    actionIds.add(row.objectName);
    if (!timer && !stopped) {
      timer = setTimeout(() => {
        run().catch((err: unknown) => {
          if (!stopped) ctx.log.error({ err }, `${name} failed`);
        });
      }, delayMs);
      timer.unref();
    }
  });
  return {
    stop() {
      stopped = true;
      off();
      if (timer) clearTimeout(timer);
    },
  };
}
