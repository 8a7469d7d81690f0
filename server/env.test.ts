import { describe, expect, it } from "vitest";
import { readEnv as readEnvFrom } from "./env";

const readEnv = (vars: Record<string, string>) => readEnvFrom(vars as NodeJS.ProcessEnv);

describe("DATABASE_URL (issue 11)", () => {
  it("takes a SQLite file (the default) or a PostgreSQL URL", () => {
    expect(readEnv({}).DATABASE_URL).toBe("file:./data/drover.db");
    expect(readEnv({ DATABASE_URL: "postgresql://drover:pw@db.internal:5432/drover" }).DATABASE_URL).toContain("postgresql://");
    expect(readEnv({ DATABASE_URL: "postgres://drover@127.0.0.1/drover?sslmode=require" }).DROVER_PG_POOL_SIZE).toBe(10);
  });

  it("refuses anything else at start, saying what it takes", () => {
    for (const url of ["mysql://x@h/db", "postgresql://host-without-database", "./data/drover.db"]) {
      expect(() => readEnv({ DATABASE_URL: url })).toThrow(/DATABASE_URL: file:PATH \(SQLite\) or postgresql:\/\//);
    }
    expect(() => readEnv({ DROVER_PG_POOL_SIZE: "0" })).toThrow(/DROVER_PG_POOL_SIZE/);
  });
});
