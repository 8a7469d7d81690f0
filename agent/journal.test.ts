/**
 * The action journal: order, the restart rule, re-offers, reports in history order, pruning.
 * Each row names the seed-004 / protocol rule it checks.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { OfferedAction } from "../lib/protocol";
import { registry, type Executor } from "./executors";
import { ActionJournal, ActionJournalDocument, KEEP_FINISHED, KEPT_OUTPUT_BYTES, RESTART_REASON, stateOf, type JournalEntry } from "./journal";
import { MemoryStateStore } from "./state";

const NOW = new Date("2030-01-01T00:00:00Z");
let counter = 0;
function offered(createdAt: string, kind = "once", id?: string): OfferedAction {
  counter++;
  return { id: id ?? `00000000-0000-4000-8000-${String(counter).padStart(12, "0")}`, kind, args: {}, createdAt };
}

const stub = (kind: string, idempotent: boolean, recover?: Executor["recover"]): Executor => ({
  kind,
  idempotent,
  argsSchema: z.object({}),
  run: async () => ({ output: "" }),
  ...(recover ? { recover } : {}),
});
const executors = registry([stub("once", false), stub("again", true), stub("proof", false, () => ({ output: "completed across the restart" }))]);

/** Adds, and acknowledges the NEW report (the runner waits for it). */
function queued(journal: ActionJournal, action: OfferedAction): JournalEntry {
  const entry = journal.add(action, NOW);
  journal.acknowledge(entry, 0);
  return entry;
}

function runToEnd(journal: ActionJournal, entry: JournalEntry, state: "DONE" | "FAILED" = "DONE", output = "ok"): void {
  journal.start(entry, NOW);
  journal.finish(entry, state, NOW, { output });
  for (let i = entry.reported; i < entry.history.length; i++) journal.acknowledge(entry, i);
}

describe("order (seed 004: actions are processed by creation time, one at a time)", () => {
  it("runs the oldest createdAt first, whatever the arrival order", () => {
    const journal = ActionJournal.empty();
    const late = queued(journal, offered("2030-01-01T00:00:03Z"));
    const early = queued(journal, offered("2030-01-01T00:00:01Z"));
    const middle = queued(journal, offered("2030-01-01T00:00:02.000+00:00"));
    expect(journal.nextToRun()).toBe(early);
    runToEnd(journal, early);
    expect(journal.nextToRun()).toBe(middle);
    runToEnd(journal, middle);
    expect(journal.nextToRun()).toBe(late);
  });

  it("breaks createdAt ties by arrival", () => {
    const journal = ActionJournal.empty();
    const first = queued(journal, offered("2030-01-01T00:00:01Z"));
    queued(journal, offered("2030-01-01T00:00:01Z"));
    expect(journal.nextToRun()).toBe(first);
  });

  it("does not start an action before the server has its NEW report, and a newer one does not overtake it", () => {
    const journal = ActionJournal.empty();
    const older = journal.add(offered("2030-01-01T00:00:01Z"), NOW);
    queued(journal, offered("2030-01-01T00:00:02Z"));
    expect(journal.nextToRun()).toBeNull();
    journal.acknowledge(older, 0);
    expect(journal.nextToRun()).toBe(older);
  });

  it("never runs a finished action again", () => {
    const journal = ActionJournal.empty();
    const entry = queued(journal, offered("2030-01-01T00:00:01Z"));
    runToEnd(journal, entry);
    expect(journal.nextToRun()).toBeNull();
    expect(() => journal.start(entry, NOW)).toThrow(/DONE, cannot start/);
    expect(() => journal.add(offered("2030-01-01T00:00:01Z", "once", entry.id), NOW)).toThrow(/already/);
  });
});

describe("reports (protocol: PENDING_SCHEDULE → NEW → RUNNING → DONE | FAILED, → CANCELLED)", () => {
  it("are sent in history order, final ones last", () => {
    const journal = ActionJournal.empty();
    const entry = journal.add(offered("2030-01-01T00:00:01Z"), NOW);
    // The agent may be ahead of the server: all three states wait, in order.
    journal.acknowledge(entry, 0);
    journal.start(entry, NOW);
    journal.finish(entry, "FAILED", NOW, { error: "boom" });
    journal.replay(entry);
    const sent: string[] = [];
    for (let next = journal.nextReport(); next; next = journal.nextReport()) {
      sent.push(next.state);
      journal.acknowledge(next.entry, next.index);
    }
    expect(sent).toEqual(["NEW", "RUNNING", "FAILED"]);
  });

  it("an answer to a report sent before a replay does not count", () => {
    const journal = ActionJournal.empty();
    const entry = journal.add(offered("2030-01-01T00:00:01Z"), NOW);
    journal.acknowledge(entry, 0);
    journal.start(entry, NOW);
    const inFlight = journal.nextReport();
    expect(inFlight?.state).toBe("RUNNING");
    journal.replay(entry); // the server offered it again meanwhile
    journal.acknowledge(entry, inFlight?.index ?? -1);
    expect(journal.nextReport()?.state).toBe("NEW");
  });

  it("a queued action can be cancelled; one that already finished cannot change", () => {
    const journal = ActionJournal.empty();
    const entry = queued(journal, offered("2030-01-01T00:00:01Z"));
    journal.finish(entry, "CANCELLED", NOW);
    expect(entry.history).toEqual(["NEW", "CANCELLED"]);
    expect(journal.nextToRun()).toBeNull();
    expect(() => journal.finish(entry, "CANCELLED", NOW)).toThrow(/already CANCELLED/);
    const other = queued(journal, offered("2030-01-01T00:00:02Z"));
    expect(() => journal.finish(other, "DONE", NOW)).toThrow(/NEW, cannot be DONE/);
  });

  it("a refused NEW (409) is never run and never reported again", () => {
    const journal = ActionJournal.empty();
    const entry = journal.add(offered("2030-01-01T00:00:01Z"), NOW);
    journal.refuse(entry, NOW, "the server refused the action: cannot move from CANCELLED to NEW");
    expect(stateOf(entry)).toBe("CANCELLED");
    expect(journal.nextToRun()).toBeNull();
    expect(journal.nextReport()).toBeNull();
    expect(journal.queue()).toEqual([]);
  });
});

describe("the heartbeat's queue (protocol: the agent's whole queue; what is missing becomes LOST)", () => {
  it("lists every entry not finished-and-acknowledged, with its state", () => {
    const journal = ActionJournal.empty();
    const done = queued(journal, offered("2030-01-01T00:00:01Z"));
    runToEnd(journal, done);
    const unacknowledged = queued(journal, offered("2030-01-01T00:00:02Z"));
    journal.start(unacknowledged, NOW);
    journal.finish(unacknowledged, "FAILED", NOW, { error: "x" });
    const running = queued(journal, offered("2030-01-01T00:00:03Z"));
    journal.start(running, NOW);
    const fresh = journal.add(offered("2030-01-01T00:00:04Z"), NOW);
    expect(journal.queue()).toEqual([
      { id: unacknowledged.id, state: "FAILED" },
      { id: running.id, state: "RUNNING" },
      { id: fresh.id, state: "NEW" },
    ]);
  });
});

describe("restart (DESIGN §7: a restart loses nothing and never runs a finished action again)", () => {
  async function reload(store: MemoryStateStore) {
    return ActionJournal.load(store, executors, NOW);
  }

  it("keeps queued actions and finished ones across a restart, and re-sends unanswered reports", async () => {
    const store = new MemoryStateStore();
    const { journal } = await reload(store);
    const done = queued(journal, offered("2030-01-01T00:00:01Z"));
    runToEnd(journal, done);
    const finishedUnreported = queued(journal, offered("2030-01-01T00:00:02Z"));
    journal.start(finishedUnreported, NOW);
    journal.finish(finishedUnreported, "DONE", NOW, { output: "out" });
    const waiting = queued(journal, offered("2030-01-01T00:00:03Z"));
    await journal.save();

    const { journal: after, recovered } = await reload(store);
    expect(recovered).toEqual([]);
    expect(after.get(done.id)?.history).toEqual(["NEW", "RUNNING", "DONE"]);
    expect(after.nextReport()).toMatchObject({ state: "RUNNING", entry: { id: finishedUnreported.id } });
    expect(after.nextToRun()?.id).toBe(waiting.id);
  });

  const rows: [string, string, Record<string, unknown>][] = [
    ["not idempotent → FAILED with the reason", "once", { state: "FAILED", error: RESTART_REASON, run: false }],
    ["unknown kind → FAILED with the reason", "mystery", { state: "FAILED", error: RESTART_REASON, run: false }],
    ["idempotent → run again", "again", { state: "RUNNING", run: true }],
    ["completed by the restart itself (a reboot) → DONE", "proof", { state: "DONE", output: "completed across the restart", run: false }],
  ];
  it.each(rows)("an action RUNNING when the agent died: %s", async (_name, kind, expected) => {
    const store = new MemoryStateStore();
    const { journal } = await reload(store);
    const entry = queued(journal, offered("2030-01-01T00:00:01Z", kind));
    journal.start(entry, NOW);
    journal.acknowledge(entry, 1);
    const next = queued(journal, offered("2030-01-01T00:00:02Z"));
    await journal.save();

    const { journal: after, recovered } = await reload(store);
    const recoveredEntry = after.get(entry.id);
    expect(recoveredEntry && stateOf(recoveredEntry)).toBe(expected.state);
    if (expected.error) expect(recoveredEntry?.error).toBe(expected.error);
    if (expected.output) expect(recoveredEntry?.output).toBe(expected.output);
    expect(recovered).toHaveLength(1);
    // The final state goes to the server; the action after it still runs next.
    if (!expected.run) {
      expect(after.nextReport()).toMatchObject({ state: expected.state, entry: { id: entry.id } });
      expect(after.nextToRun()?.id).toBe(next.id);
    } else {
      expect(after.nextToRun()?.id).toBe(entry.id);
    }
    // Settled on disk: a second restart does not apply the rule again.
    const again = await reload(store);
    expect(again.recovered).toHaveLength(expected.run ? 1 : 0);
  });
});

describe("pruning", () => {
  it(`keeps the newest ${KEEP_FINISHED} settled entries, never an unsettled one, and cuts kept output`, () => {
    const journal = ActionJournal.empty();
    const pending = journal.add(offered("2029-01-01T00:00:00Z"), NOW);
    const ids: string[] = [];
    for (let i = 0; i < KEEP_FINISHED + 5; i++) {
      const entry = queued(journal, offered(new Date(Date.parse("2030-01-01T00:00:00Z") + i * 1000).toISOString()));
      journal.start(entry, NOW);
      journal.finish(entry, "DONE", new Date(NOW.getTime() + i * 1000), { output: "x".repeat(KEPT_OUTPUT_BYTES * 3) });
      journal.acknowledge(entry, 1);
      journal.acknowledge(entry, 2);
      ids.push(entry.id);
    }
    expect(journal.entries).toHaveLength(KEEP_FINISHED + 1);
    expect(journal.get(pending.id)).toBeDefined();
    for (const id of ids.slice(0, 5)) expect(journal.get(id)).toBeUndefined();
    for (const id of ids.slice(5)) expect(journal.get(id)).toBeDefined();
    const kept = journal.get(ids.at(-1) ?? "")?.output ?? "";
    expect(Buffer.byteLength(kept)).toBeLessThan(KEPT_OUTPUT_BYTES + 100);
    expect(kept).toMatch(/…\[truncated \d+ bytes\]…/);
  });

  it("persists as a valid document, and knows what is not on disk yet", async () => {
    const store = new MemoryStateStore();
    const { journal } = await ActionJournal.load(store, executors, NOW);
    expect(journal.unsaved).toBe(false);
    journal.add(offered("2030-01-01T00:00:01Z"), NOW);
    expect(journal.unsaved).toBe(true);
    await journal.save();
    expect(journal.unsaved).toBe(false);
    expect(ActionJournalDocument.safeParse(await store.read("actions", ActionJournalDocument)).success).toBe(true);
  });
});
