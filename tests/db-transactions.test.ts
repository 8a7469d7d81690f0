/**
 * Interactive transactions take turns on both databases (issue 11): a read-decide-write pass
 * never writes a decision taken on a read another transaction has since changed. SQLite gets
 * it from Prisma's one connection; PostgreSQL from server/lib/pg-transactions.ts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

it("ten read-then-write transactions at once lose no update", async () => {
  const key = "tx-counter";
  await s.ctx.db.serverState.create({ data: { key, value: "0" } });
  await Promise.all(
    Array.from({ length: 10 }, () =>
      s.ctx.db.$transaction(async (tx) => {
        const row = await tx.serverState.findUniqueOrThrow({ where: { key } });
        // Another transaction would read the same value meanwhile, if they ran side by side.
        await new Promise((r) => setTimeout(r, 20));
        await tx.serverState.update({ where: { key }, data: { value: String(Number(row.value) + 1) } });
      }, { timeout: 20_000, maxWait: 20_000 }),
    ),
  );
  expect((await s.ctx.db.serverState.findUniqueOrThrow({ where: { key } })).value).toBe("10");
});
