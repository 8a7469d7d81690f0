/**
 * Scheduling node actions (seed 004 "Nodes Actions scheduling", DESIGN.md §4) against a real
 * server: what the long-poll offers and when (creation order, by each action's health policy, offered
 * again until reported, woken by approvals and by the reconcile), concurrency policies, a
 * device that cannot be reached not blocking the others, and LOST from the heartbeat queue.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { heartbeat, type EnrolledDevice } from "./helpers/devices";
import type { WorkResponse } from "../lib/protocol";
import {
  actionEvents,
  createAction,
  deviceSummary,
  enrollAs,
  getAction,
  offeredIds,
  onlineDevice,
  reportAll,
  setHealth,
  sleep,
  timed,
  work,
} from "./helpers/actions";
import { LOST_GRACE_MS } from "../server/actions/agent-reports";

/** The reconcile runs once a minute (or when a test ticks): only the change itself can wake a poll. */
let s: TestServer;
/** Concurrency policies. */
let policy: TestServer;

const POLICIES = [
  { selector: "tier=db", max: 1 },
  { selector: "tier=cache", max: 1 },
  { selector: "drover/role=controller", max: 1 },
];

beforeAll(async () => {
  [s, policy] = await Promise.all([
    startTestServer({ DROVER_SWEEP_SECONDS: "60" }),
    startTestServer({ DROVER_SWEEP_SECONDS: "60", DROVER_ACTION_CONCURRENCY: JSON.stringify(POLICIES) }),
  ]);
});
afterAll(async () => {
  await Promise.all([s?.close(), policy?.close()]);
});

/** Runs `fn` with the server's clock moved `ms` ahead. */
async function later<T>(server: TestServer, ms: number, fn: () => Promise<T>): Promise<T> {
  return at(server, Date.now() + ms, fn);
}

/** Runs `fn` with the server's clock held at `instant` (ms since the epoch), however long it takes. */
async function at<T>(server: TestServer, instant: number, fn: () => Promise<T>): Promise<T> {
  const real = server.ctx.now;
  server.ctx.now = () => new Date(instant);
  try {
    return await fn();
  } finally {
    server.ctx.now = real;
  }
}

/** A held poll the test can give up on (the agent going away), so it does not outlive the test. */
function abortablePoll(server: TestServer, d: EnrolledDevice, wait: number) {
  const controller = new AbortController();
  let settled = false;
  const done = fetch(`${server.url}/api/agent/v1/work?wait=${wait}`, { headers: d.auth, signal: controller.signal })
    .then((res) => res.json() as Promise<WorkResponse>)
    .then((body) => {
      settled = true;
      return body;
    });
  // An aborted poll rejects; only answers matter here.
  done.catch(() => undefined);
  return { done, settled: () => settled, abort: () => controller.abort() };
}

/** A held poll must still be waiting: no answer after `ms`. */
async function stillHeld(poll: { settled: () => boolean }, ms = 250): Promise<void> {
  await sleep(ms);
  expect(poll.settled()).toBe(false);
}

// ---------------------------------------------------------------------------------------

describe("what /work offers", () => {
  it("PENDING_SCHEDULE actions, oldest createdAt first, as {id, kind, args, createdAt}", async () => {
    const d = await onlineDevice(s);
    // The oldest waits for approval; approving it later does not send it to the back.
    const first = await createAction(s, d.name, "exec", { args: { command: "date" } });
    const created = [first];
    for (let i = 0; i < 4; i++) {
      await sleep(3);
      created.push(await createAction(s, d.name, "noop", { args: { i } }));
    }
    expect((await work(s, d, 0)).body.actions.map((a) => a.id)).toEqual(created.slice(1).map((a) => a.id));
    expect((await s.api("POST", `/actions/${first.id}/approve`, {})).status).toBe(200);

    const res = await work(s, d, 0);
    expect(res.status).toBe(200);
    expect(res.body.actions.map((a) => a.id)).toEqual(created.map((a) => a.id));
    expect(res.body.actions[0]).toEqual({ id: first.id, kind: "exec", args: { command: "date" }, createdAt: first.createdAt });
    expect(res.body.actions[2]).toEqual({ id: created[2]!.id, kind: "noop", args: { i: 1 }, createdAt: created[2]!.createdAt });
    const times = res.body.actions.map((a) => Date.parse(a.createdAt));
    expect(new Set(times).size).toBe(times.length);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
  });

  it("offers the same action on each poll until the agent reports it", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop");
    expect((await getAction(s, a.id)).offeredAt).toBeNull();
    expect(await offeredIds(s, d)).toEqual([a.id]);
    const offeredAt = (await getAction(s, a.id)).offeredAt;
    expect(offeredAt).not.toBeNull();
    expect(await offeredIds(s, d)).toEqual([a.id]);
    // A held poll answers at once while there is an action to offer.
    const held = await work(s, d, 10);
    expect(held.body.actions.map((x) => x.id)).toEqual([a.id]);
    // offeredAt is the first offer.
    expect((await getAction(s, a.id)).offeredAt).toBe(offeredAt);
    expect((await getAction(s, a.id)).state).toBe("PENDING_SCHEDULE");

    await reportAll(s, d, a.id, "NEW");
    expect(await offeredIds(s, d)).toEqual([]);
    expect((await work(s, d, 0)).body).toEqual({ actions: [] });
  });

  it("only to the action's own device", async () => {
    const [d, other] = [await onlineDevice(s), await onlineDevice(s)];
    const a = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, other)).toEqual([]);
    expect(await offeredIds(s, d)).toEqual([a.id]);
  });

  it("by its health policy: Online and Degraded devices by default, Online only or Error too when asked; cancels still go out", async () => {
    const d = await onlineDevice(s);
    const running = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([running.id]);
    await reportAll(s, d, running.id, "NEW", "RUNNING");
    await setHealth(s, d, { resources: { disk: "Degraded" }, actions: [{ id: running.id, state: "RUNNING" }] });
    expect(await deviceSummary(s, d.name)).toBe("Degraded");
    // Degraded still works (issue 21): the default goes; one that asks for Online only waits.
    const onlineOnly = await createAction(s, d.name, "noop", { healthPolicy: "Online" });
    expect(onlineOnly.healthPolicy).toBe("Online");
    const byDefault = await createAction(s, d.name, "noop");
    expect(byDefault.healthPolicy).toBe("Degraded");
    expect(await offeredIds(s, d)).toEqual([byDefault.id]);
    expect((await getAction(s, onlineOnly.id)).offeredAt).toBeNull();
    // An operator's cancel reaches a Degraded device all the same.
    expect((await s.api("POST", `/actions/${running.id}/cancel`, {})).status).toBe(200);
    expect((await work(s, d, 0)).body).toMatchObject({ cancel: [running.id] });
    await reportAll(s, d, running.id, "CANCELLED");
    await reportAll(s, d, byDefault.id, "NEW", "RUNNING", "DONE");

    // In Error, only what allows Error goes (the repair that clears it).
    for (const resource of ["Error", "Critical"] as const) {
      await setHealth(s, d, { resources: { cpu: resource } });
      expect(await deviceSummary(s, d.name)).toBe("Error");
      expect((await work(s, d, 0)).body).toEqual({ actions: [] });
    }
    const repair = await createAction(s, d.name, "noop", { healthPolicy: "Error" });
    const notInError = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([repair.id]);
    await reportAll(s, d, repair.id, "NEW", "RUNNING", "DONE");
    await setHealth(s, d, {});
    expect(await deviceSummary(s, d.name)).toBe("Online");
    expect(await offeredIds(s, d)).toEqual([onlineOnly.id, notInError.id]);
  });

  it("a health policy that is not one of Online, Degraded or Error is refused, and nothing is created", async () => {
    const d = await onlineDevice(s);
    const res = await s.api<{ error: { code: string; message: string } }>("POST", "/actions", { device: d.name, kind: "noop", args: {}, healthPolicy: "Offline" });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/healthPolicy/);
    expect((await s.api<{ items: unknown[] }>("GET", `/actions?device=${d.name}`)).body.items).toEqual([]);
  });

  it("never to an Offline device (enrolled, never heard from)", async () => {
    const d = await enrollAs(s);
    expect(await deviceSummary(s, d.name)).toBe("Offline");
    const a = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([]);
    expect((await getAction(s, a.id)).offeredAt).toBeNull();
  });

  it("not to a device being decommissioned", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop");
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    const res = await work(s, d, 0);
    expect(res.body.decommission).toBe(true);
    expect(res.body.actions).toEqual([]);
    expect((await getAction(s, a.id)).offeredAt).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------

describe("held polls", () => {
  it("the controllers' tick yields to the event loop between its steps (what waits runs meanwhile, not after all of them)", async () => {
    // On SQLite every query settles without I/O: without the yield, a tick ran whole in one chain
    // of microtasks and nothing queued behind it (a request, a held poll's answer) ran until it ended.
    let ended = false;
    const turns: boolean[] = [];
    const count = () => {
      turns.push(ended);
      if (!ended) setImmediate(count);
    };
    const tick = s.tick().then(() => (ended = true));
    setImmediate(count);
    await tick;
    expect(turns.filter((afterEnd) => !afterEnd).length).toBeGreaterThanOrEqual(5);
  });

  it("a held poll answers promptly when its action is approved", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "reboot");
    const poll = timed(work(s, d, 10));
    await stillHeld(poll, 200);
    const t0 = performance.now();
    const approved = s.api("POST", `/actions/${a.id}/approve`, {});
    const answer = await poll.done;
    expect((await approved).status).toBe(200);
    const ms = answer.at - t0;
    console.log(`held poll answered ${ms.toFixed(1)} ms after the approval request was sent`);
    expect(answer.body.actions.map((x) => x.id)).toEqual([a.id]);
    // Answered by the approval's wake: with the action, well before the poll's 10 s wait, and the
    // reconcile runs once a minute here. How fast (the protocol says 100 ms) is the bench's to measure.
    expect(ms).toBeLessThan(5_000);
  });

  it("a held poll answers promptly when an action needing no approval is created", async () => {
    const d = await onlineDevice(s);
    const poll = timed(work(s, d, 10));
    await stillHeld(poll, 200);
    const t0 = performance.now();
    const a = await createAction(s, d.name, "noop");
    const answer = await poll.done;
    console.log(`held poll answered ${(answer.at - t0).toFixed(1)} ms after the create request was sent`);
    expect(answer.body.actions.map((x) => x.id)).toEqual([a.id]);
    expect(answer.at - t0).toBeLessThan(500);
  });

  it("an action waiting for approval does not wake a held poll", async () => {
    const d = await onlineDevice(s);
    const poll = timed(work(s, d, 1));
    await createAction(s, d.name, "exec");
    const answer = await poll.done;
    expect(answer.body).toEqual({ actions: [] });
  });

  it("the reconcile wakes a held poll once the device is Online again", async () => {
    const d = await onlineDevice(s);
    await setHealth(s, d, { resources: { memory: "Degraded" } });
    const a = await createAction(s, d.name, "noop", { healthPolicy: "Online" });
    expect(await offeredIds(s, d)).toEqual([]);
    const poll = timed(work(s, d, 10));
    // Several reconciles (controllers' passes, run here by the test) wake it while the device is Degraded: the poll stays held.
    await stillHeld(poll, 200);
    for (let i = 0; i < 3; i++) expect(await s.tick()).toBe(true);
    await stillHeld(poll, 200);
    const t0 = performance.now();
    await setHealth(s, d, {});
    await s.tick();
    const answer = await poll.done;
    console.log(`held poll answered ${(answer.at - t0).toFixed(1)} ms after the device was Online again`);
    expect(answer.body.actions.map((x) => x.id)).toEqual([a.id]);
    expect(answer.at - t0).toBeLessThan(3000);
  });
});

// ---------------------------------------------------------------------------------------

describe("concurrency policies", () => {
  it("tier=db max 1: one db device at a time; the next is offered when the first one's action is DONE", async () => {
    const [a, b] = [await onlineDevice(policy, { labels: { tier: "db" } }), await onlineDevice(policy, { labels: { tier: "db" } })];
    const web = await onlineDevice(policy, { labels: { tier: "web" } });
    const aAction = await createAction(policy, a.name, "noop");
    const bAction = await createAction(policy, b.name, "noop");
    const webAction = await createAction(policy, web.name, "noop");

    expect(await offeredIds(policy, a)).toEqual([aAction.id]);
    // a holds the only db slot from the moment its action went out.
    expect(await offeredIds(policy, b)).toEqual([]);
    expect((await getAction(policy, bAction.id)).offeredAt).toBeNull();
    // Devices no policy matches are not held back.
    expect(await offeredIds(policy, web)).toEqual([webAction.id]);

    const poll = timed(work(policy, b, 10));
    await stillHeld(poll, 200);
    await reportAll(policy, a, aAction.id, "NEW");
    await stillHeld(poll);
    await reportAll(policy, a, aAction.id, "RUNNING");
    await stillHeld(poll);
    const t0 = performance.now();
    await reportAll(policy, a, aAction.id, { state: "DONE", output: "ok" });
    const answer = await poll.done;
    expect(answer.body.actions.map((x) => x.id)).toEqual([bAction.id]);
    console.log(`the next db device was offered its action ${(answer.at - t0).toFixed(1)} ms after the first one's DONE`);

    // Now b holds the slot (offered, not yet confirmed), and a waits.
    const aNext = await createAction(policy, a.name, "noop");
    expect(await offeredIds(policy, a)).toEqual([]);
    await reportAll(policy, b, bAction.id, "NEW", "RUNNING", "FAILED");
    expect(await offeredIds(policy, a)).toEqual([aNext.id]);
    await reportAll(policy, a, aNext.id, "NEW", "RUNNING", "DONE");
  });

  it("when a slot frees up and several devices wait for it, exactly one gets it", async () => {
    for (let round = 0; round < 2; round++) {
      const holder = await onlineDevice(policy, { labels: { tier: "db" } });
      const waiters = await Promise.all(Array.from({ length: 4 }, () => onlineDevice(policy, { labels: { tier: "db" } })));
      const held = await createAction(policy, holder.name, "noop");
      const waiting = await Promise.all(waiters.map((w) => createAction(policy, w.name, "noop")));
      expect(await offeredIds(policy, holder)).toEqual([held.id]);
      await reportAll(policy, holder, held.id, "NEW", "RUNNING");
      const polls = waiters.map((w) => abortablePoll(policy, w, 10));
      try {
        await sleep(200);
        expect(polls.some((p) => p.settled())).toBe(false);
        // DONE wakes every waiter at once; each poll checks the policy concurrently.
        await reportAll(policy, holder, held.id, "DONE");
        const first = await Promise.race(polls.map((p) => p.done));
        expect(first.actions).toHaveLength(1);
        // Give the others every chance to (wrongly) take the slot too.
        await sleep(300);
        const offered = await policy.ctx.db.action.findMany({ where: { id: { in: waiting.map((w) => w.id) }, offeredAt: { not: null } }, select: { id: true } });
        expect(offered.map((o) => o.id), `round ${round}`).toEqual([first.actions[0]!.id]);
        expect(polls.filter((p) => p.settled())).toHaveLength(1);
      } finally {
        for (const p of polls) p.abort();
      }
      // Clean up: the winner finishes, the others are cancelled, so the next round starts free.
      for (const [i, w] of waiters.entries()) {
        const a = await getAction(policy, waiting[i]!.id);
        if (a.offeredAt) await reportAll(policy, w, a.id, "NEW", "RUNNING", "DONE");
        else expect((await policy.api("POST", `/actions/${a.id}/cancel`, {})).status).toBe(200);
      }
    }
  });

  it("an operator cancelling the offered action frees the slot, and wakes the next device's held poll", async () => {
    const [a, b] = [await onlineDevice(policy, { labels: { tier: "db" } }), await onlineDevice(policy, { labels: { tier: "db" } })];
    const aAction = await createAction(policy, a.name, "noop");
    const bAction = await createAction(policy, b.name, "noop");
    expect(await offeredIds(policy, a)).toEqual([aAction.id]);
    const poll = timed(work(policy, b, 10));
    await stillHeld(poll, 200);
    // Offered but never confirmed: the operator cancels it, and b may go at once.
    const t0 = performance.now();
    expect((await policy.api("POST", `/actions/${aAction.id}/cancel`, {})).status).toBe(200);
    const answer = await poll.done;
    expect(answer.body.actions.map((x) => x.id)).toEqual([bAction.id]);
    expect(answer.at - t0).toBeLessThan(1000);
    // The agent's CANCELLED frees it as well.
    const aNext = await createAction(policy, a.name, "noop");
    expect(await offeredIds(policy, a)).toEqual([]);
    await reportAll(policy, b, bAction.id, "NEW", "CANCELLED");
    expect(await offeredIds(policy, a)).toEqual([aNext.id]);
    await reportAll(policy, a, aNext.id, "NEW", "RUNNING", "DONE");
  });

  it("an action that becomes LOST frees the slot, and wakes the next device's held poll", async () => {
    const [a, b] = [await onlineDevice(policy, { labels: { tier: "db" } }), await onlineDevice(policy, { labels: { tier: "db" } })];
    const aAction = await createAction(policy, a.name, "noop");
    const bAction = await createAction(policy, b.name, "noop");
    expect(await offeredIds(policy, a)).toEqual([aAction.id]);
    await reportAll(policy, a, aAction.id, "NEW", "RUNNING");
    const poll = timed(work(policy, b, 10));
    await stillHeld(poll, 200);
    const t0 = performance.now();
    // a's agent no longer has it (its state was wiped), past the grace.
    await later(policy, LOST_GRACE_MS + 1_000, () => setHealth(policy, a, { actions: [] }));
    expect((await getAction(policy, aAction.id)).state).toBe("LOST");
    const answer = await poll.done;
    expect(answer.body.actions.map((x) => x.id)).toEqual([bAction.id]);
    expect(answer.at - t0).toBeLessThan(1000);
    await reportAll(policy, b, bAction.id, "NEW", "RUNNING", "DONE");
  });

  it("selectors see drover/role: one controller at a time, workers unaffected", async () => {
    const [c1, c2] = [await onlineDevice(policy, { role: "controller" }), await onlineDevice(policy, { role: "controller" })];
    const w = await onlineDevice(policy, { role: "worker" });
    const [x1, x2, xw] = [await createAction(policy, c1.name, "noop"), await createAction(policy, c2.name, "noop"), await createAction(policy, w.name, "noop")];
    expect(await offeredIds(policy, c1)).toEqual([x1.id]);
    expect(await offeredIds(policy, c2)).toEqual([]);
    expect(await offeredIds(policy, w)).toEqual([xw.id]);
    await reportAll(policy, c1, x1.id, "NEW", "RUNNING", "DONE");
    expect(await offeredIds(policy, c2)).toEqual([x2.id]);
    await reportAll(policy, c2, x2.id, "NEW", "RUNNING", "DONE");
  });

  it("a device that cannot be reached (Offline) does not block another device's offers", async () => {
    // Offline: enrolled, never heard from, with an action waiting. Under the same policy.
    const gone = await enrollAs(policy, { labels: { tier: "cache" } });
    expect(await deviceSummary(policy, gone.name)).toBe("Offline");
    const stuck = await createAction(policy, gone.name, "noop");
    expect(await offeredIds(policy, gone)).toEqual([]);
    const live = await onlineDevice(policy, { labels: { tier: "cache" } });
    const ok = await createAction(policy, live.name, "noop");
    expect(await offeredIds(policy, live)).toEqual([ok.id]);
    expect((await getAction(policy, stuck.id)).state).toBe("PENDING_SCHEDULE");

    // Without a policy too: an Offline device's waiting actions hold nobody back.
    const gone2 = await enrollAs(s);
    await createAction(s, gone2.name, "noop");
    const live2 = await onlineDevice(s);
    const ok2 = await createAction(s, live2.name, "noop");
    expect(await offeredIds(s, live2)).toEqual([ok2.id]);
  });
});

// ---------------------------------------------------------------------------------------

describe("LOST: what the heartbeat queue no longer lists", () => {
  it(`NEW or RUNNING missing from the queue stays within the ${LOST_GRACE_MS} ms grace and is LOST after it`, async () => {
    expect(LOST_GRACE_MS).toBe(5_000);
    const d = await onlineDevice(s);
    const gone = await createAction(s, d.name, "noop");
    const goneRunning = await createAction(s, d.name, "noop");
    const kept = await createAction(s, d.name, "noop");
    const waiting = await createAction(s, d.name, "exec");
    const finished = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([gone.id, goneRunning.id, kept.id, finished.id]);
    await reportAll(s, d, gone.id, "NEW");
    await reportAll(s, d, goneRunning.id, "NEW", "RUNNING");
    await reportAll(s, d, kept.id, "NEW", "RUNNING");
    await reportAll(s, d, finished.id, "NEW", "RUNNING", "DONE");
    const queue = [{ id: kept.id, state: "RUNNING" }];

    // Within the grace: a report may still be in flight alongside the heartbeat. Timed from the
    // reports themselves, on a clock held still (a loaded machine may take seconds between them).
    const reportedAt = await Promise.all([gone.id, goneRunning.id].map(async (id) => Date.parse((await getAction(s, id)).updatedAt)));
    await at(s, Math.max(...reportedAt), () => setHealth(s, d, { actions: queue }));
    await at(s, Math.min(...reportedAt) + LOST_GRACE_MS - 100, () => setHealth(s, d, { actions: queue }));
    expect((await getAction(s, gone.id)).state).toBe("NEW");
    expect((await getAction(s, goneRunning.id)).state).toBe("RUNNING");

    await at(s, Math.max(...reportedAt) + LOST_GRACE_MS + 1_000, () => setHealth(s, d, { actions: queue }));
    const lost = await getAction(s, gone.id);
    expect(lost.state).toBe("LOST");
    expect(lost.finishedAt).not.toBeNull();
    expect((await getAction(s, goneRunning.id)).state).toBe("LOST");
    for (const id of [gone.id, goneRunning.id]) {
      expect((await actionEvents(s, id)).at(-1)).toMatchObject({ type: "ActionStateChanged", reason: "LOST", actor: "server" });
    }
    // Listed in the queue: stays. Never sent to the agent, or finished: not the queue's business.
    expect((await getAction(s, kept.id)).state).toBe("RUNNING");
    expect((await getAction(s, waiting.id)).state).toBe("PENDING_APPROVE");
    expect((await getAction(s, finished.id)).state).toBe("DONE");

    // LOST is final: a late report of the agent is refused.
    expect((await s.agent("PUT", `/actions/${gone.id}`, { state: "RUNNING" }, d.auth)).status).toBe(409);
    // A later heartbeat changes nothing more.
    const events = (await actionEvents(s, gone.id)).length;
    await later(s, LOST_GRACE_MS + 2_000, () => setHealth(s, d, { actions: queue }));
    expect(await actionEvents(s, gone.id)).toHaveLength(events);
  });

  it("an action stays as long as the queue lists it, however long", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([a.id]);
    await reportAll(s, d, a.id, "NEW");
    await later(s, 10 * 60_000, () => setHealth(s, d, { actions: [{ id: a.id, state: "NEW" }] }));
    expect((await getAction(s, a.id)).state).toBe("NEW");
    expect((await actionEvents(s, a.id)).map((e) => e.reason)).toEqual(["PENDING_SCHEDULE", "NEW"]);
  });

  it("another device's heartbeat never marks this device's actions LOST", async () => {
    const [d, other] = [await onlineDevice(s), await onlineDevice(s)];
    const a = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([a.id]);
    await reportAll(s, d, a.id, "NEW", "RUNNING");
    await later(s, LOST_GRACE_MS + 1_000, async () => {
      expect((await heartbeat(s, other, { actions: [] })).status).toBe(200);
    });
    expect((await getAction(s, a.id)).state).toBe("RUNNING");
  });
});
