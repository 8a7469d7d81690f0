/**
 * The outputs of many actions, together (issue 21, item 4): a request's actions (or a workflow
 * step attempt's) grouped by identical result, as Ansible and Salt summarise a run: "48
 * devices: DONE, ok", "3 devices: FAILED, <error>". A read model shaped for the request page
 * and the step panel: one GROUP BY in SQL, written once for SQLite and PostgreSQL, a page of
 * groups at a time, each group's output cut and its first devices named.
 *
 * The key is (state, error, output) after trimming trailing whitespace (spaces, tabs, CR, LF)
 * from error and output, and with no output (null) the same as an empty one: "ok\n" and "ok"
 * are one group. Nothing else is normalised: outputs that differ inside (a hostname, a time)
 * are different groups, which is what an operator comparing devices wants to see.
 */
import { z } from "zod";
import type { ServerContext } from "../context";
import { dialectOfDb, jsonArrayOfArrays, queryRaw } from "../lib/dialect-sql";
import type { ActionState } from "../../lib/action-status";
import { GROUP_ERROR_SHOWN, GROUP_OUTPUT_SHOWN } from "../../lib/output-groups";

/** Characters trimmed from the end of an output or error before grouping. */
const TRAILING = " \t\r\n";

/** Which actions to group: a request's, or the ones a workflow step attempt's targets hold now. */
export type OutputSource =
  | { requestId: string }
  | { workflow: string; run: number; step: string; attempt: number };

/** The paging of an outputs query (a request's, a workflow step's), the same on tRPC and REST (query strings coerced). */
export const OutputGroupsInput = z.object({
  /** Groups per page, largest first. */
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** Groups to skip: the previous page's nextOffset. */
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  /** Devices named per group (the rest are counted). */
  devices: z.coerce.number().int().min(1).max(200).default(20),
  /** Only actions whose output, error or device name contains this, case-insensitive. */
  search: z.string().max(200).optional(),
});
export type OutputGroupsPage = z.infer<typeof OutputGroupsInput>;

export interface OutputGroup {
  state: ActionState;
  /** Trailing whitespace trimmed; "" when none. Longer than GROUP_OUTPUT_SHOWN: head and tail with a marker between. */
  output: string;
  /** The (trimmed) output's whole length, in characters. */
  outputChars: number;
  error: string | null;
  count: number;
  /** The first `devices` device names, by name; actionIds[i] is devices[i]'s action. */
  devices: string[];
  actionIds: string[];
}

export interface OutputGroupsView {
  /** Actions grouped (those matching `search`). */
  actions: number;
  /** Groups in all; `items` is one page of them. */
  groups: number;
  offset: number;
  items: OutputGroup[];
  /** The offset of the next page, null on the last. */
  nextOffset: number | null;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `col` shown whole when at most `max` characters, else its first and last halves around a marker (same text on both databases). */
function cut(col: string, max: number): string {
  const half = max / 2;
  return `CASE WHEN LENGTH(${col}) <= ${max} THEN ${col} ELSE SUBSTR(${col}, 1, ${half}) || '
… ' || CAST(LENGTH(${col}) - ${max} AS TEXT) || ' characters left out …
' || SUBSTR(${col}, LENGTH(${col}) - ${half - 1}) END`;
}

/** A JSON array of [device, actionId, k] built by the database. */
function membersJson(dialect: "sqlite" | "postgresql"): string {
  return jsonArrayOfArrays(dialect, `m."device", m."id", m."k"`);
}

/** A page of the source's actions grouped by identical (state, error, output), largest group first. */
export async function outputGroups(ctx: ServerContext, source: OutputSource, page: OutputGroupsPage): Promise<OutputGroupsView> {
  const args: unknown[] = [TRAILING, TRAILING];
  let where: string;
  if ("requestId" in source) {
    where = `a."requestId" = ?`;
    args.push(source.requestId);
  } else {
    where = `a."id" IN (SELECT sa."actionId" FROM "WorkflowStepAction" sa WHERE sa."workflowName" = ? AND sa."run" = ? AND sa."step" = ? AND sa."attempt" = ?)`;
    args.push(source.workflow, source.run, source.step, source.attempt);
  }
  if (page.search) {
    const like = `%${escapeLike(page.search.toLowerCase())}%`;
    where += ` AND (LOWER(COALESCE(a."output", '')) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(a."error", '')) LIKE ? ESCAPE '\\' OR LOWER(d."name") LIKE ? ESCAPE '\\')`;
    args.push(like, like, like);
  }
  const groupsCte = `WITH src AS (
      SELECT a."id", a."state", d."name" AS "device", COALESCE(RTRIM(a."error", ?), '') AS "e", COALESCE(RTRIM(a."output", ?), '') AS "o"
      FROM "Action" a JOIN "Device" d ON d."id" = a."deviceId"
      WHERE ${where}
    ),
    g AS (SELECT "state", "e", "o", COUNT(*) AS "n" FROM src GROUP BY "state", "e", "o")`;
  const dialect = dialectOfDb(ctx.db);
  const [totals] = await queryRaw<{ groups: number | bigint; actions: number | bigint | null }[]>(ctx.db, `${groupsCte} SELECT COUNT(*) AS "groups", SUM("n") AS "actions" FROM g`, ...args);
  const groups = Number(totals?.groups ?? 0);
  if (groups === 0 || page.offset >= groups) return { actions: Number(totals?.actions ?? 0), groups, offset: page.offset, items: [], nextOffset: null };
  // Ranked by size, ties by the key itself, so a page is the same on both databases and from one call to the next.
  const rows = await queryRaw<{ rank: number | bigint; state: string; n: number | bigint; e: string; oChars: number | bigint; oShown: string; members: string | null }[]>(
    ctx.db,
    `${groupsCte},
    ranked AS (SELECT "state", "e", "o", "n", ROW_NUMBER() OVER (ORDER BY "n" DESC, "state", "e", "o") AS "rank" FROM g),
    pg AS (SELECT * FROM ranked WHERE "rank" > ? AND "rank" <= ?),
    m AS (
      SELECT pg."rank", src."id", src."device", ROW_NUMBER() OVER (PARTITION BY pg."rank" ORDER BY src."device", src."id") AS "k"
      FROM src JOIN pg ON pg."state" = src."state" AND pg."e" = src."e" AND pg."o" = src."o"
    )
    SELECT pg."rank", pg."state", pg."n", ${cut(`pg."e"`, GROUP_ERROR_SHOWN)} AS "e", LENGTH(pg."o") AS "oChars", ${cut(`pg."o"`, GROUP_OUTPUT_SHOWN)} AS "oShown",
      (SELECT ${membersJson(dialect)} FROM m WHERE m."rank" = pg."rank" AND m."k" <= ?) AS "members"
    FROM pg ORDER BY pg."rank"`,
    ...args,
    page.offset,
    page.offset + page.limit,
    page.devices,
  );
  const items = rows.map((r): OutputGroup => {
    const members = (JSON.parse(r.members ?? "[]") as [string, string, number][]).sort((a, b) => a[2] - b[2]);
    return {
      state: r.state as ActionState,
      output: r.oShown,
      outputChars: Number(r.oChars),
      error: r.e === "" ? null : r.e,
      count: Number(r.n),
      devices: members.map((m) => m[0]),
      actionIds: members.map((m) => m[1]),
    };
  });
  const next = page.offset + page.limit;
  return { actions: Number(totals?.actions ?? 0), groups, offset: page.offset, items, nextOffset: next < groups ? next : null };
}
