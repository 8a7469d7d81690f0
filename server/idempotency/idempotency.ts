/**
 * Idempotency keys on the creating procedures (issue 22), after Stripe's: a client sends a key
 * with a create (REST: the `Idempotency-Key` header; the console: the input's `idempotencyKey`),
 * and the same key with the same input within 24 h answers the first request's answer instead
 * of creating again.
 *
 * The key is written by the domain function in the same transaction as what it creates
 * (`claimInTx`, or the fast path's `insertActions` for actions), so "created" and "key
 * recorded" commit together or not at all: a crash between the two cannot leave a create that
 * a retry would repeat. The answer is stored on the key's row just after the commit; a retry
 * that finds the row without an answer (the first request still running, or its server gone
 * before answering) gets 409 naming what was created, never a second create. Of two requests
 * with one key at once, a second on the same server is refused before it starts (409); on
 * another server the key's primary key refuses the loser's transaction, which rolls back its
 * create, and it answers as a retry would.
 *
 * Only successes are kept: a refused request (4xx) rolls its transaction back, key and all, so
 * a corrected retry with the same key runs. Keys are per caller (the actor, user:<name>), so
 * two operators' keys never meet, and the controllers' sweep deletes them 24 h after.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { ServerContext } from "../context";
import type { Tx } from "../db";
import { conflict, invalid } from "../errors";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** 1–255 visible ASCII characters (a UUID is the usual choice). */
export const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, "visible ASCII characters only (no spaces), e.g. a UUID")
  .describe("Idempotency key: the same key with the same request within 24 h answers the first answer instead of creating again");

/** The input field the creating procedures take (REST fills it from the header). */
export const idempotencyKeyField = { idempotencyKey: IdempotencyKey.optional() };

/**
 * A body that is the created object itself (a Fleet): its `idempotencyKey` field, checked, and
 * the object without it.
 */
export function takeIdempotencyKey(input: unknown): { idempotencyKey: string | undefined; body: unknown } {
  if (!input || typeof input !== "object" || Array.isArray(input) || !("idempotencyKey" in input)) return { idempotencyKey: undefined, body: input };
  const { idempotencyKey, ...body } = input as Record<string, unknown>;
  if (idempotencyKey === undefined) return { idempotencyKey: undefined, body };
  const parsed = IdempotencyKey.safeParse(idempotencyKey);
  if (!parsed.success) throw invalid(`idempotencyKey: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return { idempotencyKey: parsed.data, body };
}

/** What a domain function writes in its transaction when the request carries a key. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  operation: string;
  fingerprint: string;
  createdAt: Date;
  expiresAt: Date;
}

/** The claim with what it created (Plan/<id>, ActionRequest/<id>…), as the stores write it. */
export type IdempotencyRow = IdempotencyClaim & { ref: string };

/** The key's row, inside the create's transaction. A key already there fails the insert: the whole create rolls back. */
export async function claimInTx(tx: Tx, claim: IdempotencyClaim | undefined, ref: string): Promise<void> {
  if (claim) await tx.idempotencyKey.create({ data: { ...claim, ref } });
}

/** Answers that hold a secret shown once (only its hash is kept): never stored, so never replayed. */
const SECRET_ANSWERS: Record<string, string> = { "enrollmentTokens.create": "enrollment token" };

/** Keys being run by this server now (per server: tests run several in one process). */
const running = new WeakMap<ServerContext, Set<string>>();

/** Object keys sorted, so {a, b} and {b, a} are one body. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

export function fingerprintOf(operation: string, input: unknown): string {
  return createHash("sha256").update(JSON.stringify([operation, canonical(input)])).digest("hex");
}

interface StoredKey {
  operation: string;
  fingerprint: string;
  ref: string;
  response: string | null;
}

/** What a key already used answers: the stored answer, or 409 saying why not. */
function replay(stored: StoredKey, claim: Pick<IdempotencyClaim, "key" | "operation" | "fingerprint">): unknown {
  if (stored.operation !== claim.operation || stored.fingerprint !== claim.fingerprint) {
    throw conflict(
      `Idempotency-Key "${claim.key}" was used for a different request (${stored.operation}) in the last 24 h: the same key must come with the same request; use a new key for a new one`,
    );
  }
  if (stored.response !== null) return JSON.parse(stored.response) as unknown;
  const secret = SECRET_ANSWERS[stored.operation];
  if (secret) {
    throw conflict(`Idempotency-Key "${claim.key}" already created ${secret} ${stored.ref}; its secret is shown once and not kept: revoke it and create another with a new key`);
  }
  throw conflict(
    `Idempotency-Key "${claim.key}" already created ${stored.ref} but its answer is not stored: the first request is still running, or its server stopped before answering. GET it rather than creating it again`,
  );
}

/**
 * Runs a create under the caller's idempotency key: `run` gets the claim to write in its
 * transaction (undefined without a key). The answer is JSON as stored (dates as ISO text), which
 * is also what the wire carries (the tRPC link has no transformer).
 */
export async function idempotent<T, I extends { idempotencyKey?: string | undefined }>(
  ctx: { server: ServerContext; actor: string },
  operation: string,
  input: I,
  run: (claim: IdempotencyClaim | undefined) => Promise<T>,
): Promise<T> {
  const { idempotencyKey: key, ...rest } = input;
  if (key === undefined) return run(undefined);
  const server = ctx.server;
  const scope = ctx.actor;
  const where = { scope_key: { scope, key } };
  const now = server.now();
  const claim: IdempotencyClaim = { scope, key, operation, fingerprint: fingerprintOf(operation, rest), createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) };
  const mine = running.get(server) ?? new Set<string>();
  running.set(server, mine);
  const id = JSON.stringify([scope, key]);
  if (mine.has(id)) throw conflict(`a request with Idempotency-Key "${key}" is still running: retry when it has answered`);
  mine.add(id);
  try {
    const stored = await server.db.idempotencyKey.findUnique({ where, select: { operation: true, fingerprint: true, ref: true, response: true, expiresAt: true } });
    if (stored && stored.expiresAt > now) return replay(stored, claim) as T;
    // Past its 24 h but not yet pruned: a new request under the same key.
    if (stored) await server.db.idempotencyKey.deleteMany({ where: { scope, key, expiresAt: { lte: now } } });
    let result: T;
    try {
      result = await run(claim);
    } catch (error) {
      // Our transaction rolled back, key and all; a key there now is another server's request.
      const other = await server.db.idempotencyKey.findUnique({ where, select: { operation: true, fingerprint: true, ref: true, response: true } });
      if (other) return replay(other, claim) as T;
      throw error;
    }
    if (!SECRET_ANSWERS[operation]) {
      // The create has committed: a failure to store its answer must not turn it into an error.
      try {
        const { count } = await server.db.idempotencyKey.updateMany({ where: { scope, key }, data: { response: JSON.stringify(result) } });
        if (count === 0) server.log.error({ operation }, "idempotency key not written by the create: its retries would run again");
      } catch (err) {
        server.log.error({ err, operation }, "idempotency: answer not stored (a retry gets 409 naming what was created)");
      }
    }
    return result;
  } finally {
    mine.delete(id);
  }
}

/** The controllers' sweep: keys past their 24 h. */
export async function pruneIdempotencyKeys(ctx: ServerContext): Promise<number> {
  const { count } = await ctx.db.idempotencyKey.deleteMany({ where: { expiresAt: { lte: ctx.now() } } });
  return count;
}
