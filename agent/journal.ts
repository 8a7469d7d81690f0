/**
 * The action journal: the agent's queue of actions, on disk (`actions.json` in the state
 * directory, written atomically through the StateStore; in memory for the simulator).
 *
 * Each entry keeps the states the agent moved the action through (`history`, seed 004:
 * NEW → RUNNING → DONE | FAILED, or → CANCELLED) and how many of them the server has
 * answered (`reported`). The server only accepts moves along that path, so reports are
 * sent in history order; a report is journaled before it is sent, so a restart re-sends
 * whatever the server has not answered. Finished entries stay a while (the newest
 * KEEP_FINISHED) so that a re-offer of a finished id is re-reported, never run again.
 *
 * The in-memory operations are synchronous and pure of I/O; save() persists, flushed()
 * waits for the last save.
 */
import { z } from "zod";
import { AGENT_ACTION_STATES, type OfferedAction } from "../lib/protocol";
import type { ExecutorRegistry } from "./executors";
import { truncateOutput } from "./executors/output";
import type { StateStore } from "./state";
import { isoTime } from "./timing";

export type AgentActionState = (typeof AGENT_ACTION_STATES)[number];
export const FINISHED_STATES: readonly AgentActionState[] = ["DONE", "FAILED", "CANCELLED"];
export const isFinished = (state: AgentActionState): boolean => FINISHED_STATES.includes(state);

/** The error of an action that was RUNNING when the agent died (and is not idempotent). */
export const RESTART_REASON = "agent restarted while the action was running";
/** Finished and acknowledged entries kept to recognise re-offers. */
export const KEEP_FINISHED = 100;
/** Output kept of an entry whose final report the server has (the server holds it all). */
export const KEPT_OUTPUT_BYTES = 4 * 1024;

export const JournalEntry = z.object({
  id: z.string(),
  kind: z.string(),
  args: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  /** Arrival order; breaks createdAt ties. */
  seq: z.number().int().min(0),
  /** The states the agent moved the action through; the last is its state. */
  history: z.array(z.enum(AGENT_ACTION_STATES)).min(1),
  /** How many of `history` the server has answered (acknowledged, or refused for good). */
  reported: z.number().int().min(0),
  receivedAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  output: z.string().optional(),
  error: z.string().optional(),
});
export type JournalEntry = z.infer<typeof JournalEntry>;

export const ActionJournalDocument = z.object({
  version: z.literal(1),
  nextSeq: z.number().int().min(0),
  entries: z.array(JournalEntry),
});
export type ActionJournalDocument = z.infer<typeof ActionJournalDocument>;

export function stateOf(entry: JournalEntry): AgentActionState {
  return entry.history[entry.history.length - 1] as AgentActionState;
}

/** Finished, and the server has every report: nothing more to do or tell. */
export function isSettled(entry: JournalEntry): boolean {
  return isFinished(stateOf(entry)) && entry.reported >= entry.history.length;
}

/** Oldest createdAt first; arrival order among equals (and for unparseable times). */
export function compareEntries(a: JournalEntry, b: JournalEntry): number {
  const ta = Date.parse(a.createdAt);
  const tb = Date.parse(b.createdAt);
  if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return ta - tb;
  return a.seq - b.seq;
}

export type Recovery =
  | { id: string; kind: string; outcome: "failed"; error: string }
  | { id: string; kind: string; outcome: "rerun" }
  | { id: string; kind: string; outcome: "done" };

export interface PendingReport {
  entry: JournalEntry;
  /** Index in entry.history of the state to send. */
  index: number;
  state: AgentActionState;
}

export class ActionJournal {
  private saving: Promise<void> = Promise.resolve();
  /** Bumped by every change; `savedVersion` is the newest one known to be on disk. */
  private version = 0;
  private savedVersion = 0;

  private constructor(
    private readonly store: StateStore | null,
    private readonly doc: ActionJournalDocument,
  ) {}

  /** A journal in memory only (tests). */
  static empty(): ActionJournal {
    return new ActionJournal(null, { version: 1, nextSeq: 0, entries: [] });
  }

  /**
   * Reads the journal and settles what a restart must settle: an action found RUNNING is
   * FAILED with RESTART_REASON, unless its kind is idempotent (it stays RUNNING and runs
   * again) or its executor recognises the restart as its completion (DONE).
   */
  static async load(store: StateStore, executors: ExecutorRegistry, now: Date): Promise<{ journal: ActionJournal; recovered: Recovery[] }> {
    const doc = (await store.read("actions", ActionJournalDocument)) ?? { version: 1 as const, nextSeq: 0, entries: [] };
    const journal = new ActionJournal(store, doc);
    const recovered = journal.recover(executors, now);
    if (recovered.length > 0) await journal.save();
    return { journal, recovered };
  }

  /** The restart rule, on the entries in memory. */
  recover(executors: ExecutorRegistry, now: Date): Recovery[] {
    const recovered: Recovery[] = [];
    for (const entry of this.doc.entries) {
      if (stateOf(entry) !== "RUNNING") continue;
      const executor = executors.get(entry.kind);
      const result = executor?.recover?.(new Date(entry.startedAt ?? entry.receivedAt)) ?? null;
      if (result) {
        this.finish(entry, "DONE", now, { output: result.output });
        recovered.push({ id: entry.id, kind: entry.kind, outcome: "done" });
      } else if (executor?.idempotent) {
        recovered.push({ id: entry.id, kind: entry.kind, outcome: "rerun" });
      } else {
        this.finish(entry, "FAILED", now, { error: RESTART_REASON });
        recovered.push({ id: entry.id, kind: entry.kind, outcome: "failed", error: RESTART_REASON });
      }
    }
    return recovered;
  }

  get entries(): readonly JournalEntry[] {
    return this.doc.entries;
  }

  get(id: string): JournalEntry | undefined {
    return this.doc.entries.find((e) => e.id === id);
  }

  /** Entries not settled: the agent's queue, as the heartbeat reports it. */
  queue(): { id: string; state: AgentActionState }[] {
    return this.sorted()
      .filter((e) => !isSettled(e))
      .map((e) => ({ id: e.id, state: stateOf(e) }));
  }

  /** A newly offered action, NEW. */
  add(action: OfferedAction, now: Date): JournalEntry {
    if (this.get(action.id)) throw new Error(`action ${action.id} is already in the journal`);
    const entry: JournalEntry = {
      id: action.id,
      kind: action.kind,
      args: action.args,
      createdAt: action.createdAt,
      seq: this.doc.nextSeq++,
      history: ["NEW"],
      reported: 0,
      receivedAt: isoTime(now),
    };
    this.doc.entries.push(entry);
    this.version++;
    return entry;
  }

  /** NEW → RUNNING. */
  start(entry: JournalEntry, now: Date): void {
    if (stateOf(entry) !== "NEW") throw new Error(`action ${entry.id} is ${stateOf(entry)}, cannot start`);
    entry.history.push("RUNNING");
    entry.startedAt = isoTime(now);
    this.version++;
  }

  /** → DONE | FAILED | CANCELLED, with the output and error to report. */
  finish(entry: JournalEntry, state: "DONE" | "FAILED" | "CANCELLED", now: Date, fields: { output?: string | undefined; error?: string | undefined } = {}): void {
    const from = stateOf(entry);
    if (isFinished(from)) throw new Error(`action ${entry.id} is already ${from}`);
    if (state !== "CANCELLED" && from !== "RUNNING") throw new Error(`action ${entry.id} is ${from}, cannot be ${state}`);
    entry.history.push(state);
    entry.finishedAt = isoTime(now);
    if (fields.output !== undefined) entry.output = fields.output;
    if (fields.error !== undefined) entry.error = fields.error;
    this.version++;
  }

  /**
   * The server refused the NEW report (409: it no longer schedules this action, e.g. an
   * operator cancelled it on the way). It is never run, and nothing more is sent.
   */
  refuse(entry: JournalEntry, now: Date, reason: string): void {
    entry.history.push("CANCELLED");
    entry.finishedAt = isoTime(now);
    entry.error = reason;
    entry.reported = entry.history.length;
    this.version++;
  }

  /** The report of history[index] was answered (200, or refused for good). */
  acknowledge(entry: JournalEntry, index: number): void {
    // A replay() while the report was in flight starts over; this answer does not count.
    if (entry.reported !== index) return;
    entry.reported = index + 1;
    this.version++;
    if (isSettled(entry)) {
      if (entry.output !== undefined) entry.output = truncateOutput(entry.output, KEPT_OUTPUT_BYTES);
      this.prune();
    }
  }

  /** The server lost track (it offers the action again): send every report again, in order. */
  replay(entry: JournalEntry): void {
    entry.reported = 0;
    this.version++;
  }

  /** The next report to send: the oldest entry with a state the server has not answered. */
  nextReport(): PendingReport | null {
    for (const entry of this.sorted()) {
      if (entry.reported < entry.history.length) {
        const state = entry.history[entry.reported] as AgentActionState;
        return { entry, index: entry.reported, state };
      }
    }
    return null;
  }

  /**
   * The action to run next, or null: a RUNNING one left by a restart (idempotent kinds run
   * again), else the oldest NEW one once the server has its NEW report. One at a time and
   * in order: a newer action never overtakes an older one that waits for its report.
   */
  nextToRun(): JournalEntry | null {
    const sorted = this.sorted();
    const resumed = sorted.find((e) => stateOf(e) === "RUNNING");
    if (resumed) return resumed;
    const oldest = sorted.find((e) => stateOf(e) === "NEW");
    return oldest && oldest.reported >= 1 ? oldest : null;
  }

  /** Entries not settled (queued, running, or with reports to send). */
  activeCount(): number {
    return this.doc.entries.filter((e) => !isSettled(e)).length;
  }

  /** Drops the oldest settled entries beyond KEEP_FINISHED. */
  prune(keep = KEEP_FINISHED): string[] {
    const settled = this.doc.entries.filter(isSettled);
    if (settled.length <= keep) return [];
    settled.sort((a, b) => (a.finishedAt ?? "").localeCompare(b.finishedAt ?? "") || a.seq - b.seq);
    const drop = new Set(settled.slice(0, settled.length - keep).map((e) => e.id));
    this.doc.entries = this.doc.entries.filter((e) => !drop.has(e.id));
    this.version++;
    return [...drop];
  }

  /** Persists the journal as it is now; writes are queued in order by the store. */
  save(): Promise<void> {
    const version = this.version;
    if (!this.store) {
      this.savedVersion = version;
      return Promise.resolve();
    }
    const write = this.store.write("actions", this.doc).then(() => {
      this.savedVersion = Math.max(this.savedVersion, version);
    });
    this.saving = write.catch(() => undefined);
    return write;
  }

  /** Changes not yet known to be on disk. */
  get unsaved(): boolean {
    return this.savedVersion < this.version;
  }

  /** Resolves when every save so far has ended (written or failed). */
  flushed(): Promise<void> {
    return this.saving;
  }

  private sorted(): JournalEntry[] {
    return [...this.doc.entries].sort(compareEntries);
  }
}
