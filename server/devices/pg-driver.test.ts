/**
 * PostgreSQL's form of a `many` statement (sql-driver.ts): the one-row text over unnest() of text
 * arrays. Run on PostgreSQL by every store write of tests/ (the postgresql project); here, the
 * shapes it accepts and the ones it refuses.
 */
import { describe, expect, it } from "vitest";
import { overRows } from "./pg-driver";

const unnest = (n: number) =>
  `unnest(${Array.from({ length: n }, (_, k) => `$${k + 1}::text[]`).join(", ")}) WITH ORDINALITY AS v(${Array.from({ length: n }, (_, k) => `k${k + 1}`).join(", ")}, "i")`;

describe("overRows", () => {
  it.each([
    [
      "an INSERT: its VALUES selected from the arrays, in their order",
      `INSERT INTO "Event" ("time", "type") VALUES (?::timestamp, ?)`,
      `INSERT INTO "Event" ("time", "type") SELECT v.k1::timestamp, v.k2 FROM ${unnest(2)} ORDER BY v."i"`,
    ],
    [
      "an INSERT with RETURNING and a function call among its values",
      `INSERT INTO "T" ("a", "b") VALUES (?, COALESCE(?, 'x')) RETURNING "id"`,
      `INSERT INTO "T" ("a", "b") SELECT v.k1, COALESCE(v.k2, 'x') FROM ${unnest(2)} ORDER BY v."i" RETURNING "id"`,
    ],
    [
      "an upsert: ON CONFLICT kept after the rows",
      `INSERT INTO "T" ("k", "v") VALUES (?, COALESCE(?, 'x')) ON CONFLICT ("k") DO UPDATE SET "v" = COALESCE(excluded."v", "T"."v") RETURNING "k"`,
      `INSERT INTO "T" ("k", "v") SELECT v.k1, COALESCE(v.k2, 'x') FROM ${unnest(2)} ORDER BY v."i" ON CONFLICT ("k") DO UPDATE SET "v" = COALESCE(excluded."v", "T"."v") RETURNING "k"`,
    ],
    [
      "an UPDATE: the arrays joined before its WHERE",
      `UPDATE "Device" SET "reported" = ?, "lastSeen" = ?::timestamp WHERE "id" = ? RETURNING "id"`,
      `UPDATE "Device" SET "reported" = v.k1, "lastSeen" = v.k2::timestamp FROM ${unnest(3)} WHERE "id" = v.k3 RETURNING "id"`,
    ],
  ])("%s", (_rule, sql, expected) => {
    expect(overRows(sql)).toBe(expected);
  });

  it.each([
    ["a SELECT", `SELECT "id" FROM "Device" WHERE "id" = ?`],
    ["an UPDATE without WHERE", `UPDATE "Device" SET "reported" = ?`],
    ["an UPDATE with a subquery (its WHERE would be taken for the statement's)", `UPDATE "Device" SET "owner" = (SELECT "name" FROM "Fleet" WHERE "id" = ?) WHERE "id" = ?`],
    ["an INSERT … SELECT", `INSERT INTO "T" ("a") SELECT ?`],
  ])("refuses %s", (_what, sql) => {
    expect(() => overRows(sql)).toThrow(/not a one-row INSERT/);
  });
});
