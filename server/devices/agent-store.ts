/**
 * The agent hot path as one interface (issue 22 item 2): the token lookup, heartbeats, the
 * sweep's writes, the poll's facts and offers, action creation, request decisions, the agent's
 * reports and LOST, the inventory. One implementation, agent-store-sql.ts, written once over a
 * small driver for each database (sqlite-driver.ts, pg-driver.ts). Callers (credentials,
 * heartbeat, work, inventory, the agent's side of actions, action creation, request decisions,
 * the sweep) are written against this.
 *
 * Reads may answer synchronously (SQLite) or with a promise (PostgreSQL): callers `await`
 * them either way. Every write is a group commit: the writes that arrive in one turn of the
 * event loop share one transaction, each in its own savepoint (one that throws rolls back and
 * rejects alone), and a caller's promise settles after the commit.
 */
import type { DeviceFactsRow, StatusColumns } from "./status";
import type { EventRow, NewEvent } from "../events/events";
import type { ActionReport, OfferedAction } from "../../lib/protocol";
import type { AppError } from "../errors";
import type { IdempotencyRow } from "../idempotency/idempotency";
import type { UsageSample } from "./inventory";
import type { Requester } from "./sql-driver";

export type MaybePromise<T> = T | Promise<T>;

/** What a heartbeat writes: the report, lastSeen and every derived column. */
export interface HeartbeatWrite extends StatusColumns {
  reported: string;
  lastSeen: Date;
  conflictPaused?: boolean;
  credentialRevokedAt?: Date;
}

/** A new action as the operator side creates it (the other columns start empty). */
export interface NewActionRow {
  id: string;
  deviceId: string;
  kind: string;
  args: string;
  origin: string;
  state: string;
  requireApproval: boolean;
  createdBy: string;
  createdAt: Date;
  /** Not started by then: cancelled (issue 10). */
  expiresAt?: Date | null;
  /** The operator's request it belongs to (ActionRequest, issue 10). */
  requestId?: string | null;
  /** The ended action it runs again (issue 10). */
  rerunOf?: string | null;
  /** The least healthy device summary it is offered to (lib/health-policy.ts); Degraded when absent. */
  healthPolicy?: string;
}

/** An ActionRequest row written in the same commit as its actions (server/requests). */
export interface NewRequestRow {
  id: string;
  kind: string;
  args: string;
  origin: string;
  ref: string | null;
  targetKind: string;
  target: string;
  createdBy: string;
  createdAt: Date;
  requireApproval: boolean;
}

/** What a long-poll needs to know about its device (work.ts). */
export interface WorkFacts {
  renderedVersion: number;
  templateVersion: string | null;
  renderedSpecId: string | null;
  spec: string | null;
  decommissionRequestedAt: Date | null;
  lifecycle: string;
  summary: string;
  /** Whether the device has actions to offer or cancels to tell: the poll's cheap first check. */
  actionWork: boolean;
  /** Its credential is revoked (issue 23): a held poll woken then answers 401. */
  revoked: boolean;
}

export type DeviceWithCredential = DeviceFactsRow & {
  credentialRevokedAt: Date | null;
  /** Whether it held NEW or RUNNING actions when read (set by the reads that authenticate a device): false, a heartbeat has none to find lost. */
  holdsActions?: boolean;
};

export interface SweepItem {
  id: string;
  lastSeen: Date;
  columns: StatusColumns;
  events: NewEvent[];
}

export interface ActionsDecision {
  ids: string[];
  to: string;
  decision: string;
  actor: string;
  reason: string | null;
  event: (id: string) => NewEvent;
}

export interface RequestDecision {
  requestId: string;
  to: string;
  decision: string;
  actor: string;
  reason: string | null;
  actionEvent: (id: string) => NewEvent;
  requestEvent: (moved: number) => NewEvent;
}

export interface ReportOutcome {
  events: EventRow[];
  finished: boolean;
  refused?: AppError;
  output?: string;
  /** The action as the report left it: the report's answer. */
  view: AgentActionView;
}

/** The action as recorded, for the agent's report answer. */
export interface AgentActionView {
  id: string;
  kind: string;
  args: Record<string, unknown>;
  origin: string;
  state: string;
  output: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The fingerprints of the device's current client certificate and of the one it renewed (issue 23). */
export interface CertificateColumns {
  certFingerprint: string | null;
  certPreviousFingerprint: string | null;
}
export type CertifiedDevice = DeviceWithCredential & CertificateColumns;

export interface AgentStore {
  deviceByTokenHash(hash: string): MaybePromise<DeviceWithCredential | null>;
  /** The device whose current or previous client certificate has this fingerprint (issue 23). */
  deviceByCertificate(fingerprint: string): MaybePromise<CertifiedDevice | null>;
  /** Who a token belongs to, without the status facts (polls and action reports need no more). */
  deviceIdentityByTokenHash(hash: string): MaybePromise<{ id: string; name: string; revoked: boolean } | null>;
  /**
   * Re-reads the device, lets `decide` compute what to write from that fresh row, and writes it
   * with its events in the same transaction: nothing can interleave. `requester`: the
   * heartbeat's connection; gone before its group commit, nothing is written (rejects with ClientGone).
   */
  writeHeartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }, requester?: Requester): Promise<EventRow[]>;
  /** The sweep's writes, each guarded by the lastSeen it was derived from, with their events. */
  writeSweep(items: SweepItem[], now: Date): Promise<EventRow[]>;
  /** A heartbeat that changed no status: lastSeen and the report only (`requester` as for writeHeartbeat). */
  touch(id: string, reported: string, lastSeen: Date, requester?: Requester): Promise<void>;
  /**
   * The inventory's upsert (inventory.ts): the full static facts when sent (else kept), and a
   * usage sample appended unless the last one is of the same minute, keeping the newest `max`.
   */
  writeInventory(deviceId: string, system: string | null, sample: UsageSample | null, max: number, now: Date, requester?: Requester): Promise<void>;
  workFacts(id: string): MaybePromise<WorkFacts | null>;
  /** A template version's spec content, parsed once (versions are immutable). Callers must not mutate it. */
  templateSpec(id: string): MaybePromise<Record<string, unknown> | null>;
  /** Devices per value of each status axis. */
  statusCounts(): MaybePromise<{ axis: string; value: string; n: number }[]>;
  /**
   * PENDING_SCHEDULE actions whose health policy admits a device of `healthRank`
   * (lib/health-policy.ts), oldest first, marked offered; and the ids to cancel. A null rank
   * offers nothing (cancels only).
   */
  offerActions(deviceId: string, now: Date, healthRank: number | null): Promise<{ actions: OfferedAction[]; cancel: string[] }>;
  /**
   * Operator-created actions with their events (and their request row), in one group commit;
   * with the request's idempotency key first (issue 22), whose duplicate fails the write whole.
   */
  insertActions(rows: NewActionRow[], events: NewEvent[], now: Date, request?: NewRequestRow, idempotency?: IdempotencyRow): Promise<EventRow[]>;
  /**
   * PENDING_APPROVE actions decided by id, all or none: each moved by a guarded UPDATE, with
   * an event each. A missing one is 404, one not PENDING_APPROVE (or moved concurrently) 409,
   * and then nothing is written.
   */
  decideActions(d: ActionsDecision, now: Date): Promise<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }>;
  /** An action request decided as a unit: its PENDING_APPROVE actions moved, with their events. */
  decideRequest(d: RequestDecision, now: Date): Promise<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }>;
  /**
   * An agent's report on one action, decided by decideReport from the rows as they are inside
   * the write. A refusal worth recording is returned (its event committed), not thrown.
   */
  reportAction(device: { id: string; name: string }, id: string, report: ActionReport, now: Date): Promise<ReportOutcome>;
  /** NEW or RUNNING actions unchanged for `graceMs` that the agent's queue lacks become LOST. */
  markLost(device: { id: string; name: string }, queued: Set<string>, now: Date, graceMs: number): Promise<EventRow[]>;
  /** Writes what it accepted, then lets the connection(s) go. */
  close(): MaybePromise<void>;
}

/** Why the actions of a device whose credential was revoked (by an operator, or at the end of its decommission) are LOST. */
export const REVOKED_OUTCOME_UNKNOWN = "the device's credential was revoked: its outcome cannot be known";

/** The LOST event of an action missing from its device's queue. */
export function lostEvent(device: { name: string }, a: { id: string; state: string }, why = `missing from ${device.name}'s queue`): NewEvent {
  return { objectKind: "Action", objectName: a.id, type: "ActionStateChanged", reason: "LOST", message: `${a.state} → LOST: ${why}`, actor: "server" };
}
