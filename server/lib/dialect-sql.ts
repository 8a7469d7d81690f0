/**
 * Hand-written SQL on both databases (issue 11). A statement is written once with `?`
 * placeholders; the few fragments that differ between SQLite and PostgreSQL (a JSON list of
 * ids, a JSON object of labels, reading JSON text) come from the helpers below, chosen by the
 * client's own provider, so a domain rule keeps one function and one statement shape.
 *
 * Dates are passed as `Date`: SQLite's Prisma stores DateTime as ISO text with an offset
 * (`sqliteDate`), PostgreSQL as timestamp(3), which the driver binds from a Date.
 */
import type { Db, Dialect, Tx } from "../db";
import { sqliteDate } from "../devices/sqlite-driver";

/** Which database a Prisma client (or transaction client) talks to. */
export function dialectOfDb(db: Db | Tx): Dialect {
  return (db as unknown as { _activeProvider?: string })._activeProvider === "postgresql" ? "postgresql" : "sqlite";
}

/** `?` → `$1, $2, …` for PostgreSQL. The statements here have no `?` inside literals. */
export function placeholders(dialect: Dialect, sql: string): string {
  if (dialect === "sqlite") return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function bind(dialect: Dialect, args: unknown[]): unknown[] {
  return dialect === "sqlite" ? args.map((a) => (a instanceof Date ? sqliteDate(a) : a)) : args;
}

/** `$queryRawUnsafe` with `?` placeholders on either database. */
export function queryRaw<T>(db: Db | Tx, sql: string, ...args: unknown[]): Promise<T> {
  const d = dialectOfDb(db);
  return db.$queryRawUnsafe<T>(placeholders(d, sql), ...bind(d, args));
}

/** `$executeRawUnsafe` with `?` placeholders on either database. */
export function executeRaw(db: Db | Tx, sql: string, ...args: unknown[]): Promise<number> {
  const d = dialectOfDb(db);
  return db.$executeRawUnsafe(placeholders(d, sql), ...bind(d, args));
}

/**
 * `IN (…)` over one parameter holding a JSON array of strings: lists of any length travel as
 * one bound value, so no statement meets a bound-parameter limit.
 */
export function inJsonList(dialect: Dialect): string {
  return dialect === "sqlite" ? `IN (SELECT value FROM json_each(?))` : `IN (SELECT jsonb_array_elements_text(?::jsonb))`;
}

/**
 * ` ORDER BY alias."id" FOR NO KEY UPDATE OF alias` on PostgreSQL: the rows a SELECT reads stay
 * locked for the transaction, taken in key order (two such transactions never deadlock). Nothing
 * on SQLite, whose one writer a transaction already is once it has written (and where sorting
 * 10,000 wide rows would only cost time).
 */
export function lockedInKeyOrder(dialect: Dialect, alias: string): string {
  return dialect === "postgresql" ? ` ORDER BY ${alias}."id" FOR NO KEY UPDATE OF ${alias}` : "";
}

/** A device's labels as one JSON object text (NULL when it has none). */
export function labelsObject(dialect: Dialect, deviceIdColumn: string): string {
  return dialect === "sqlite"
    ? `(SELECT json_group_object(l."key", l."value") FROM "DeviceLabel" l WHERE l."deviceId" = ${deviceIdColumn})`
    : `(SELECT jsonb_object_agg(l."key", l."value")::text FROM "DeviceLabel" l WHERE l."deviceId" = ${deviceIdColumn})`;
}

/** A value inside a JSON text column by path (`["config", "renderedVersion"]`), as SQL's scalar (text on PostgreSQL). */
export function jsonField(dialect: Dialect, column: string, path: string[]): string {
  return dialect === "sqlite" ? `json_extract(${column}, '$.${path.join(".")}')` : `(${column}::jsonb #>> '{${path.join(",")}}')`;
}

/** A JSON array text of one JSON array per row (`items`: its elements, e.g. `m."device", m."id"`), aggregated. */
export function jsonArrayOfArrays(dialect: Dialect, items: string): string {
  return dialect === "sqlite" ? `json_group_array(json_array(${items}))` : `json_agg(json_build_array(${items}))::text`;
}

/** The rows of a JSON array bound as one parameter, as `value` (each element) and `key` (its position, to ORDER BY). */
export function jsonArrayRows(dialect: Dialect): string {
  return dialect === "sqlite" ? `json_each(?)` : `jsonb_array_elements(?::jsonb) WITH ORDINALITY AS e(value, key)`;
}

/** The id of the newest row (by `orderColumn`) of `table` for each `groupColumn` in a bound JSON list. */
export function newestIdPer(dialect: Dialect, table: string, groupColumn: string, orderColumn: string): string {
  // SQLite's bare column beside max() is the max's row; PostgreSQL has DISTINCT ON.
  return dialect === "sqlite"
    ? `SELECT "id", max("${orderColumn}") FROM "${table}" WHERE "${groupColumn}" ${inJsonList(dialect)} GROUP BY "${groupColumn}"`
    : `SELECT DISTINCT ON ("${groupColumn}") "id" FROM "${table}" WHERE "${groupColumn}" ${inJsonList(dialect)} ORDER BY "${groupColumn}", "${orderColumn}" DESC`;
}

/** The largest number at `field` among the objects of the JSON array at `arrayKey` of a JSON text column (NULL when there is no such array). */
export function maxInJsonArray(dialect: Dialect, column: string, arrayKey: string, field: string): string {
  // SQLite's json_each tolerates a missing list; PostgreSQL's jsonb_array_elements needs an array.
  return dialect === "sqlite"
    ? `(SELECT max(json_extract(a.value, '$.${field}')) FROM json_each(${column}, '$.${arrayKey}') a)`
    : `(SELECT max((a ->> '${field}')::float8) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${column}::jsonb -> '${arrayKey}') = 'array' THEN ${column}::jsonb -> '${arrayKey}' ELSE '[]'::jsonb END) a)`;
}

/** Prisma's `contains` ignoring case: SQLite's LIKE already ignores ASCII case, and its Prisma has no `mode`. */
export function containsIgnoringCase(dialect: Dialect, text: string): { contains: string; mode?: "insensitive" } {
  return dialect === "postgresql" ? { contains: text, mode: "insensitive" } : { contains: text };
}

/** A Date as a bound value in a `Prisma.sql` template: SQLite's stored text, or the Date itself. */
export function sqlDate(db: Db | Tx, d: Date): string | Date {
  return dialectOfDb(db) === "sqlite" ? sqliteDate(d) : d;
}
