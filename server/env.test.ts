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

describe("DROVER_DEVICE_TOKENS (issue 23)", () => {
  it("accepts tokens by default; refusing them needs the server's own CA, else no device could authenticate", () => {
    expect(readEnv({}).DROVER_DEVICE_TOKENS).toBe("accept");
    expect(readEnv({ DROVER_TLS: "auto", DROVER_DEVICE_TOKENS: "refuse" }).DROVER_DEVICE_TOKENS).toBe("refuse");
    expect(() => readEnv({ DROVER_DEVICE_TOKENS: "refuse" })).toThrow(/DROVER_DEVICE_TOKENS.*refuse needs DROVER_TLS=auto/);
    expect(() => readEnv({ DROVER_DEVICE_TOKENS: "sometimes" })).toThrow(/DROVER_DEVICE_TOKENS/);
    expect(readEnv({}).DROVER_DEVICE_CERT_SECONDS).toBe(30 * 86_400);
    expect(() => readEnv({ DROVER_DEVICE_CERT_SECONDS: "5" })).toThrow(/DROVER_DEVICE_CERT_SECONDS/);
  });
});
