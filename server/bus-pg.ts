/**
 * The bus across servers (issue 11, DESIGN.md §9): several Drover servers on one PostgreSQL
 * wake each other's parked long-polls, console subscriptions and controllers through
 * LISTEN/NOTIFY on one channel, on one dedicated connection per server.
 *
 * Publishing: every local publish is delivered in process at once (as on SQLite) and queued
 * for the other servers. The queue is sent on the next turn of the event loop as ONE round
 * trip (`pg_notify` over an array), its messages packed into payloads under PostgreSQL's
 * 8,000-byte limit; a burst (10,000 events of a bulk move) is a few hundred payloads in one
 * statement, not 10,000 statements. While a send is in flight the next messages wait for it,
 * so the batches grow with the load and the order of one server's messages is kept.
 *
 * A payload: `<serverId> <json>`, the json `[[topic, wire], …]`. What travels per topic
 * (`encode`/`decode` below; its subscribers decide what they need):
 * - `device:<id>`: `{at}` (the poll's wake-latency histogram uses it); the poll re-checks the
 *   database itself.
 * - `enrollment:<id>`, `member-reports`: as published (no payload, `{owner}`).
 * - `events`: the event row, compact (the console's live updates, the fleet, rollout, plan,
 *   workflow watchers and the overview's tally read its fields). A row too big for one
 *   payload (a long message) travels as its id and the receiver reads it back.
 * - `action-output:<id>`: the output, or when too big a reference: the receiver reads the
 *   action's output back.
 * - anything else: its JSON when it fits, else nothing (the subscriber is woken with no
 *   payload).
 * A run of wakes of one commit, and a run of event rows, travel compacted (`compact`, below):
 * a fleet change of 10,000 members is ≈ 125 payloads, not ≈ 520. A server older than this
 * format skips them (no subscriber has their topic): in a rolling upgrade its polls hear such a
 * burst at the end of their wait (≤ 60 s), and its console sees those events on reload.
 * Its own notifications come back to a server too (PostgreSQL delivers to every listener):
 * the server id at the start of the payload skips them before any parsing.
 *
 * Losing the connection: reconnect with backoff (0.1 s doubling to 5 s); meanwhile messages
 * queue (at most `maxQueued`; past that they are dropped and the other servers are told to
 * re-check everything, with the next batch sent: at once when connected, a burst outrunning
 * the sender, e.g. a change to a fleet of 10,000 members, or after the reconnect). After a reconnect nothing it might have missed stays missed: every
 * parked poll and enrollment wait is woken, 500 at a time (a poll woken for nothing re-checks
 * the database and parks again), the events after the last one it saw are read back and delivered, and
 * running actions' outputs are re-read. Member reports are not replayed: the leader's next
 * tick (2 s) looks at every open rollout anyway.
 *
 * A connection that dies without an error (a network gone quiet) is found by a ping every
 * `PING_MS` that must answer within `PING_TIMEOUT_MS`.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { Bus } from "./bus";
import { isPostgresUrl, type Db } from "./db";
import type { Logger } from "./logger";
import { eventSelect, type EventRow } from "./events/events";
import { actionOutputTopic } from "./actions/agent-reports";

export const BUS_CHANNEL = "drover_bus";
/** PostgreSQL refuses a payload of 8,000 bytes or more; leave room for the server id. */
export const MAX_PAYLOAD_BYTES = 7_900;
/** Messages queued, at most: a change to a fleet of 10,000 members is ≈ 30,000 (a wake and two events each). */
const MAX_QUEUED = 100_000;
const PING_MS = 5_000;
const PING_TIMEOUT_MS = 3_000;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** Events read back after a reconnect, at most (the console pages older ones itself on its own reconnect). */
const REPLAY_EVENTS = 1_000;
const RECENT_EVENTS = 4_096;
/** Parked polls woken after a reconnect: this many, then a pause (15,000 in ≈ 1.5 s). */
const RECOVER_SLICE = 500;
const RECOVER_PAUSE_MS = 50;
/** A message telling every other server to re-check everything (its sender dropped messages). */
const WAKE_ALL = "*";

const ACTION_OUTPUT = actionOutputTopic("");

type Wire = unknown;
/** A message on the wire: `[topic]` (no payload), `[topic, wire]`, or `[topic, ref, 1]` (read it back). */
type Message = [string] | [string, Wire] | [string, Wire, 1];

export interface PgBusOptions {
  url: string;
  db: Db;
  log: Logger;
  /** Tests: a fixed id. */
  serverId?: string;
  /** Messages queued before the rest are dropped (and the others told to re-check everything). */
  maxQueued?: number;
}

/** The bus a server uses: the PostgreSQL bridge when `url` is postgresql://, else in process. */
export async function createBus(url: string, deps: Omit<PgBusOptions, "url">): Promise<Bus> {
  if (!isPostgresUrl(url)) return new Bus();
  const bus = new PgBus({ url, ...deps });
  await bus.start();
  return bus;
}

export class PgBus extends Bus {
  readonly serverId: string;
  private readonly prefix: string;
  private client: pg.Client | null = null;
  private connected = false;
  private closed = false;
  private queue: Message[] = [];
  private overflowed = false;
  private sending = false;
  private flushScheduled = false;
  private backoff = BACKOFF_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  /** The newest event id delivered here (published or heard): where a replay starts. */
  private lastEventId = 0;
  /** Ids of the events delivered lately: one read back after a reconnect and also heard is delivered once. */
  private readonly recentEvents = new Set<number>();
  private readonly recentOrder: number[] = [];
  private reconnects = 0;

  constructor(private readonly options: PgBusOptions) {
    super();
    this.serverId = options.serverId ?? randomBytes(6).toString("base64url");
    this.prefix = `${this.serverId} `;
  }

  /** Resolves once listening: a server starts answering polls only when it hears the others. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /** Connected and listening (tests, health). */
  get listening(): boolean {
    return this.connected;
  }

  /** How many times the connection was re-made (tests). */
  get reconnectCount(): number {
    return this.reconnects;
  }

  override publish<T>(topic: string, payload?: T): void {
    this.noteEvent(topic, payload);
    super.publish(topic, payload);
    if (this.closed) return;
    if (this.queue.length >= (this.options.maxQueued ?? MAX_QUEUED)) {
      this.overflowed = true;
      return;
    }
    this.queue.push(encode(topic, payload));
    this.scheduleFlush();
  }

  override async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    // What is queued goes out first: a server shutting down still tells the others.
    if (this.connected && (this.queue.length > 0 || this.sending)) await this.flush().catch(() => undefined);
    const client = this.client;
    this.client = null;
    this.connected = false;
    await client?.end().catch(() => undefined);
  }

  // ------------------------------------------------------------------------------------
  // The connection

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, application_name: `drover-bus ${this.serverId}`, keepAlive: true });
    client.on("notification", (msg) => this.onNotification(msg));
    // 'error' and 'end' both mean this connection is over; reconnect once.
    const lost = (err?: unknown) => this.onLost(client, err);
    client.on("error", lost);
    client.on("end", () => lost());
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${BUS_CHANNEL}`);
    } catch (err) {
      this.onLost(client, err);
      throw err;
    }
    this.connected = true;
    this.backoff = BACKOFF_MIN_MS;
    this.pingTimer ??= setInterval(() => void this.ping(), PING_MS);
    this.pingTimer.unref();
    this.scheduleFlush();
  }

  private onLost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.connected = false;
    client.removeAllListeners("notification");
    // The socket may still be open (a ping that timed out): close it, ignore what it says.
    client.on("error", () => undefined);
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.options.log.warn({ err }, "bus: lost the PostgreSQL connection; reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = this.backoff * (0.75 + Math.random() * 0.5);
    this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect()
        .then(() => {
          this.reconnects++;
          this.options.log.info({ reconnects: this.reconnects }, "bus: reconnected to PostgreSQL");
          // What queued meanwhile goes out (with a re-check for the others when some was dropped).
          this.scheduleFlush();
          return this.recover();
        })
        .catch((err: unknown) => {
          if (!this.closed && !this.client) {
            this.options.log.warn({ err }, "bus: reconnect failed");
            this.scheduleReconnect();
          }
        });
    }, delay);
    this.reconnectTimer.unref();
  }

  private async ping(): Promise<void> {
    const client = this.client;
    if (!client || !this.connected) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to a ping in ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([client.query("SELECT 1"), timeout]);
    } catch (err) {
      this.onLost(client, err);
    } finally {
      clearTimeout(timer);
    }
  }

  // ------------------------------------------------------------------------------------
  // Sending

  private scheduleFlush(): void {
    if (this.flushScheduled || this.sending || !this.connected || this.queue.length === 0) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: the publishes of one commit (a wake and its events) go together.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush().catch(() => undefined);
    });
  }

  private async flush(): Promise<void> {
    const client = this.client;
    if (this.sending || !client || !this.connected || this.queue.length === 0) return;
    this.sending = true;
    const batch = this.queue;
    this.queue = [];
    // Some were dropped: the others re-check everything (after what was kept, so nothing it
    // says is older than what they then read).
    if (this.overflowed) {
      this.overflowed = false;
      batch.push([WAKE_ALL]);
    }
    try {
      await client.query(`SELECT pg_notify('${BUS_CHANNEL}', p) FROM unnest($1::text[]) AS p`, [pack(this.prefix, compact(batch))]);
    } catch (err) {
      if (this.client === client) {
        // The connection is fine, so the statement itself failed: sending it again would too.
        this.options.log.error({ err, messages: batch.length }, "bus: NOTIFY refused; messages dropped");
        this.queue.unshift([WAKE_ALL]);
      } else {
        // Connection lost: back at the front of the queue, for the next connection.
        const all = batch.concat(this.queue);
        const max = this.options.maxQueued ?? MAX_QUEUED;
        if (all.length > max) this.overflowed = true;
        this.queue = all.slice(0, max);
      }
    } finally {
      this.sending = false;
    }
    this.scheduleFlush();
  }

  // ------------------------------------------------------------------------------------
  // Receiving

  private onNotification(msg: pg.Notification): void {
    const text = msg.payload;
    if (msg.channel !== BUS_CHANNEL || !text || text.startsWith(this.prefix)) return;
    let messages: Message[];
    try {
      messages = JSON.parse(text.slice(text.indexOf(" ") + 1)) as Message[];
    } catch (err) {
      this.options.log.warn({ err }, "bus: unreadable notification ignored");
      return;
    }
    for (const m of messages) {
      if (m[0] === WAKE_ALL) {
        void this.recover();
        continue;
      }
      if (m[0] === WAKES) {
        const [, at, ids] = m as unknown as WakesMessage;
        for (const id of ids) {
          const topic = DEVICE + id;
          if (this.emitter.listenerCount(topic) > 0) super.publish(topic, { at });
        }
        continue;
      }
      if (m[0] === EVENTS) {
        if (this.emitter.listenerCount("events") === 0) continue;
        for (const row of expandEvents(m as unknown as EventsMessage)) if (this.noteEvent("events", row)) super.publish("events", row);
        continue;
      }
      // Only topics someone here listens to are decoded (or read back).
      if (this.emitter.listenerCount(m[0]) === 0) continue;
      this.deliver(m).catch((err: unknown) => this.options.log.warn({ err, topic: m[0] }, "bus: a message could not be read back"));
    }
  }

  private async deliver([topic, wire, ref]: Message): Promise<void> {
    const payload = ref === 1 ? await this.readBack(topic, wire) : decode(topic, wire);
    if (ref === 1 && payload === undefined && (topic === "events" || topic.startsWith(ACTION_OUTPUT))) return;
    if (this.noteEvent(topic, payload)) super.publish(topic, payload);
  }

  /** A message that traveled as a reference: the receiver reads what it needs. */
  private async readBack(topic: string, ref: Wire): Promise<unknown> {
    const { db } = this.options;
    if (topic === "events") return (await db.event.findUnique({ where: { id: Number(ref) }, select: eventSelect })) ?? undefined;
    if (topic.startsWith(ACTION_OUTPUT)) {
      const row = await db.action.findUnique({ where: { id: topic.slice(ACTION_OUTPUT.length) }, select: { output: true } });
      return row ? { output: row.output ?? "" } : undefined;
    }
    return undefined;
  }

  /** Notes an event delivered here; false when it was already (the only case not to deliver it). */
  private noteEvent(topic: string, payload: unknown): boolean {
    if (topic !== "events") return true;
    const id = (payload as EventRow | undefined)?.id;
    if (typeof id !== "number") return true;
    if (this.recentEvents.has(id)) return false;
    this.recentEvents.add(id);
    this.recentOrder.push(id);
    if (this.recentOrder.length > RECENT_EVENTS) this.recentEvents.delete(this.recentOrder.shift() as number);
    if (id > this.lastEventId) this.lastEventId = id;
    return true;
  }

  /**
   * After a reconnect (or another server dropped messages): what may have been missed is
   * re-checked. Polls and enrollment waits are woken with no payload (they re-read the
   * database); the events since the last one seen are read back and delivered, oldest first;
   * the outputs of actions being watched are re-read.
   */
  private async recover(): Promise<void> {
    const names = this.emitter.eventNames().filter((n): n is string => typeof n === "string");
    const polls = names.filter((topic) => topic.startsWith("device:") || topic.startsWith("enrollment:"));
    // In slices: 15,000 held polls re-checking at once would queue 15,000 reads behind the pool.
    for (let i = 0; i < polls.length; i += RECOVER_SLICE) {
      if (i > 0) await new Promise((r) => setTimeout(r, RECOVER_PAUSE_MS));
      for (const topic of polls.slice(i, i + RECOVER_SLICE)) super.publish(topic, undefined);
    }
    const { db, log } = this.options;
    try {
      if (this.emitter.listenerCount("events") > 0 && this.lastEventId > 0) {
        const rows = await db.event.findMany({ where: { id: { gt: this.lastEventId } }, orderBy: { id: "asc" }, take: REPLAY_EVENTS, select: eventSelect });
        for (const row of rows) if (this.noteEvent("events", row)) super.publish("events", row);
      }
      for (const topic of names.filter((n) => n.startsWith(ACTION_OUTPUT))) {
        const output = await this.readBack(topic, null);
        if (output !== undefined) super.publish(topic, output);
      }
    } catch (err) {
      log.warn({ err }, "bus: re-reading after a reconnect failed");
    }
  }
}

// ---------------------------------------------------------------------------------------
// The wire format

/** An event row in positional form: [id, time ms, objectKind, objectName, type, reason, message, actor]. */
type EventWire = [number, number, string, string, string, string, string, string];

function encode(topic: string, payload: unknown): Message {
  if (payload === undefined) return [topic];
  if (topic === "events") {
    const e = payload as EventRow;
    const wire: EventWire = [e.id, e.time.getTime(), e.objectKind, e.objectName, e.type, e.reason, e.message, e.actor];
    // Short rows surely fit (a UTF-16 unit is at most 6 bytes of JSON): no JSON made to measure them.
    const chars = e.objectKind.length + e.objectName.length + e.type.length + e.reason.length + e.message.length + e.actor.length;
    return chars * 6 + 200 < MAX_PAYLOAD_BYTES || fits(topic, wire) ? [topic, wire] : [topic, e.id, 1];
  }
  if (fits(topic, payload)) return [topic, payload];
  return [topic, null, 1];
}

function decode(topic: string, wire: Wire): unknown {
  if (topic === "events" && Array.isArray(wire)) {
    const [id, time, objectKind, objectName, type, reason, message, actor] = wire as EventWire;
    return { id, time: new Date(time), objectKind, objectName, type, reason, message, actor } satisfies EventRow;
  }
  return wire;
}

/** A message alone must leave room in a payload: bigger ones travel as references. */
function fits(topic: string, wire: unknown): boolean {
  return Buffer.byteLength(JSON.stringify([topic, wire])) <= MAX_PAYLOAD_BYTES - 100;
}

/*
 * Bursts, compacted (`compact`, before `pack`): a change to a fleet of 10,000 publishes 10,000
 * wakes and ≈ 20,000 events in one turn, ≈ 4 MB of payloads that every server (the sender
 * too) receives and parses. Within a batch, in order:
 * - a run of device wakes with the same `at` (one commit's) is `["@wake", at, [id, …]]`;
 * - a run of event rows is `["@events", …]`: ids and times as differences from the one
 *   before, each row its shape (the text fields but the object's name, shared by the rows of
 *   one kind of change) and its name, both as indexes into a table of the run's strings.
 * Each compact message fits one payload (a run is cut where it would not). ≈ 23 bytes an
 * event instead of ≈ 170, ≈ 40 a wake instead of ≈ 65.
 */
const WAKES = "@wake";
const EVENTS = "@events";
const DEVICE = "device:";
type WakesMessage = [typeof WAKES, number, string[]];
/**
 * `["@events", firstId, idSteps, firstTime, timeSteps, strings, shapes, refs]`: event k is
 * `refs[2k]`, its shape (objectKind, type, reason, message, actor as indexes into strings), and
 * `refs[2k + 1]`, its objectName's index.
 */
type EventsMessage = [typeof EVENTS, number, number[], number, number[], string[], number[][], number[]];
/** Room kept in a payload beside a compact message (its own brackets, the sender's id). */
const COMPACT_LIMIT = MAX_PAYLOAD_BYTES - 200;
/** A string's bytes in JSON, its quotes and escapes counted. */
const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text));

const isWake = (m: Message): m is [string, { at: number }] =>
  m.length === 2 && m[0].startsWith(DEVICE) && typeof m[1] === "object" && m[1] !== null && typeof (m[1] as { at?: unknown }).at === "number" && Object.keys(m[1]).length === 1;
const isEvent = (m: Message): m is ["events", EventWire] => m.length === 2 && m[0] === "events" && Array.isArray(m[1]);

/** A batch with its runs of wakes and of events compacted (a run of one stays as it is). */
export function compact(batch: Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < batch.length; ) {
    const m = batch[i]!;
    let end = i + 1;
    if (isWake(m)) {
      const at = m[1].at;
      while (end < batch.length && isWake(batch[end]!) && (batch[end]![1] as { at: number }).at === at) end++;
      if (end - i > 1) out.push(...wakeMessages(at, batch.slice(i, end).map((w) => w[0].slice(DEVICE.length))));
      else out.push(m);
    } else if (isEvent(m)) {
      while (end < batch.length && isEvent(batch[end]!)) end++;
      if (end - i > 1) out.push(...eventMessages(batch.slice(i, end).map((e) => e[1] as EventWire)));
      else out.push(m);
    } else out.push(m);
    i = end;
  }
  return out;
}

function wakeMessages(at: number, ids: string[]): Message[] {
  const out: Message[] = [];
  let run: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const size = jsonBytes(id) + 1;
    if (run.length > 0 && bytes + size > COMPACT_LIMIT) {
      out.push([WAKES, at, run] as unknown as Message);
      run = [];
      bytes = 0;
    }
    run.push(id);
    bytes += size;
  }
  if (run.length) out.push([WAKES, at, run] as unknown as Message);
  return out;
}

function eventMessages(rows: EventWire[]): Message[] {
  const out: Message[] = [];
  let first: EventWire | null = null;
  let last: EventWire | null = null;
  let ids: number[] = [];
  let times: number[] = [];
  let strings: string[] = [];
  let index = new Map<string, number>();
  let shapes: number[][] = [];
  let shapeIndex = new Map<string, number>();
  let refs: number[] = [];
  let bytes = 0;
  const close = () => {
    if (first) out.push([EVENTS, first[0], ids, first[1], times, strings, shapes, refs] as unknown as Message);
    first = last = null;
    ids = [];
    times = [];
    strings = [];
    index = new Map();
    shapes = [];
    shapeIndex = new Map();
    refs = [];
    bytes = 60;
  };
  const stringAt = (text: string) => {
    let n = index.get(text);
    if (n === undefined) {
      n = strings.push(text) - 1;
      index.set(text, n);
    }
    return n;
  };
  close();
  for (const row of rows) {
    const [, , objectKind, objectName, type, reason, message, actor] = row;
    const shapeKey = JSON.stringify([objectKind, type, reason, message, actor]);
    // What this row adds, generously counted: its new strings, a new shape, two indexes and two steps.
    let size = 2 * 6 + 2 * 16;
    const fresh = new Set<string>();
    for (const text of shapeIndex.has(shapeKey) ? [objectName] : [objectKind, objectName, type, reason, message, actor]) {
      if (!index.has(text) && !fresh.has(text)) {
        fresh.add(text);
        size += jsonBytes(text) + 1;
      }
    }
    if (!shapeIndex.has(shapeKey)) size += 5 * 6 + 2;
    if (first && bytes + size > COMPACT_LIMIT) close();
    if (!first) {
      // A row alone past the limit: as it came (`encode` made it a reference if it needed to be).
      if (bytes + size > COMPACT_LIMIT) {
        out.push(["events", row]);
        continue;
      }
      first = row;
    } else {
      ids.push(row[0] - last![0]);
      times.push(row[1] - last![1]);
    }
    last = row;
    let shape = shapeIndex.get(shapeKey);
    if (shape === undefined) {
      shape = shapes.push([stringAt(objectKind), stringAt(type), stringAt(reason), stringAt(message), stringAt(actor)]) - 1;
      shapeIndex.set(shapeKey, shape);
    }
    refs.push(shape, stringAt(objectName));
    bytes += size;
  }
  close();
  return out;
}

/** The event rows of an `@events` message, as `decode` gives one. */
export function expandEvents([, firstId, idSteps, firstTime, timeSteps, strings, shapes, refs]: EventsMessage): EventRow[] {
  const rows: EventRow[] = [];
  let id = firstId;
  let time = firstTime;
  for (let k = 0; k < refs.length / 2; k++) {
    if (k > 0) {
      id += idSteps[k - 1]!;
      time += timeSteps[k - 1]!;
    }
    const [objectKind, type, reason, message, actor] = shapes[refs[2 * k]!]!.map((n) => strings[n]!);
    rows.push(decode("events", [id, time, objectKind, strings[refs[2 * k + 1]!], type, reason, message, actor]) as EventRow);
  }
  return rows;
}

/** Packs messages, in order, into as few payloads as fit under the limit. */
export function pack(prefix: string, messages: Message[]): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let bytes = Buffer.byteLength(prefix) + 2;
  for (const m of messages) {
    const text = JSON.stringify(m);
    const size = Buffer.byteLength(text) + 1;
    if (parts.length > 0 && bytes + size > MAX_PAYLOAD_BYTES) {
      out.push(`${prefix}[${parts.join(",")}]`);
      parts = [];
      bytes = Buffer.byteLength(prefix) + 2;
    }
    parts.push(text);
    bytes += size;
  }
  if (parts.length > 0) out.push(`${prefix}[${parts.join(",")}]`);
  return out;
}
