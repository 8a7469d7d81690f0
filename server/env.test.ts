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
    expect(() => readEnv({ DROVER_DEVICE_TOKENS: "refuse" })).toThrow(/DROVER_DEVICE_TOKENS.*refuse needs DROVER_TLS=auto or proxy/);
    expect(() => readEnv({ DROVER_DEVICE_TOKENS: "sometimes" })).toThrow(/DROVER_DEVICE_TOKENS/);
    expect(readEnv({}).DROVER_DEVICE_CERT_SECONDS).toBe(30 * 86_400);
    expect(() => readEnv({ DROVER_DEVICE_CERT_SECONDS: "5" })).toThrow(/DROVER_DEVICE_CERT_SECONDS/);
  });
});

describe("DROVER_TLS=proxy (issue 23, item 4)", () => {
  it("needs the proxy's address, and no certificate files of its own (the proxy holds the server's)", () => {
    const env = readEnv({ DROVER_TLS: "proxy", DROVER_TRUSTED_PROXIES: "127.0.0.1", DROVER_DEVICE_TOKENS: "refuse" });
    expect(env.DROVER_TLS).toBe("proxy");
    expect(env.DROVER_CLIENT_CERT_HEADER).toBe("x-client-cert");
    expect(readEnv({ DROVER_CLIENT_CERT_HEADER: "X-Amzn-Mtls-Clientcert" }).DROVER_CLIENT_CERT_HEADER).toBe("x-amzn-mtls-clientcert");
    expect(() => readEnv({ DROVER_CLIENT_CERT_HEADER: "x client cert" })).toThrow(/DROVER_CLIENT_CERT_HEADER/);
    expect(() => readEnv({ DROVER_TLS: "proxy" })).toThrow(/DROVER_TRUSTED_PROXIES: DROVER_TLS=proxy needs the proxy's address/);
    expect(() => readEnv({ DROVER_TLS: "proxy", DROVER_TRUSTED_PROXIES: "10.0.0.0/8", DROVER_TLS_CERT: "c.pem", DROVER_TLS_KEY: "k.pem" })).toThrow(
      /DROVER_TLS: proxy: the proxy in front holds the server's certificate/,
    );
    // The CA of the proxy's certificate, for devices to pin.
    expect(readEnv({ DROVER_TLS: "proxy", DROVER_TRUSTED_PROXIES: "10.0.0.0/8", DROVER_TLS_CA: "ca.pem" }).DROVER_TLS_CA).toBe("ca.pem");
    expect(() => readEnv({ DROVER_TLS_CA: "ca.pem" })).toThrow(/DROVER_TLS_CA: needs DROVER_TLS_CERT and DROVER_TLS_KEY \(or DROVER_TLS=proxy/);
  });
});
