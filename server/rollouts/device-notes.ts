/**
 * Why a fleet member is held back by its fleet's rollout, in words, for the device's
 * `updatedInfo` (Flight Control PR 3249: every OutOfDate device says why): waiting for the
 * canary or its batch, the canary or the rollout paused, the rollout suspended, held by the
 * disruption budget. Read from the open Rollout rows (one query for a page of devices), so it
 * can never disagree with what the rollout controller decided.
 */
import type { Db } from "../db";
import { parseStoredState } from "./controller";
import type { RolloutState } from "../../lib/rollout";

interface Member {
  name: string;
  owner: string | null;
  templateVersion: string | null;
  updatedStatus: string;
}

/** Pure: the note for one member not on the rollout's version yet, or null. */
export function heldBackNote(state: RolloutState | null, target: string, device: string): string | null {
  if (state === null) return `the rollout of version ${target} is starting`;
  const inCanary = state.canary?.devices.includes(device) ?? false;
  switch (state.phase) {
    case "Canary":
      return inCanary ? "a canary device held back by the disruption budget" : `waiting for the canary of version ${target} to end`;
    case "CanaryPaused":
      return `the canary of version ${target} is paused (${state.pause?.message ?? "paused"}): nothing else gets it until it is resumed or promoted`;
    case "RollingOut": {
      const b = state.batch;
      if (b?.devices.includes(device)) return `in ${b.name} of version ${target}, held back by the disruption budget`;
      return `waiting for its batch of version ${target}${b ? ` (${b.name} is rolling out)` : ""}`;
    }
    case "Suspended":
      return `the rollout of version ${target} is suspended after ${state.batch?.name ?? "a batch"} under its success threshold: waiting for an operator to promote or abort`;
    case "Paused":
      return `the rollout of version ${target} is paused (${state.pause?.message ?? "paused"})`;
    default:
      return null;
  }
}

/** Notes for the OutOfDate members among `devices` whose fleet has an open rollout, by device name. */
export async function rolloutNotes(db: Db, devices: readonly Member[]): Promise<Map<string, string>> {
  const notes = new Map<string, string>();
  const held = devices.filter((d) => d.owner !== null && d.updatedStatus === "OutOfDate");
  if (held.length === 0) return notes;
  const owners = [...new Set(held.map((d) => d.owner as string))];
  const open = await db.rollout.findMany({ where: { endedAt: null, fleet: { name: { in: owners } } }, select: { templateVersion: true, state: true, fleet: { select: { name: true } } } });
  if (open.length === 0) return notes;
  const byFleet = new Map(open.map((r) => [r.fleet.name, { target: r.templateVersion, state: parseStoredState(r.state) }]));
  for (const d of held) {
    const r = byFleet.get(d.owner as string);
    if (!r || d.templateVersion === r.target) continue;
    const note = heldBackNote(r.state, r.target, d.name);
    if (note) notes.set(d.name, note);
  }
  return notes;
}
