import { describe, expect, it } from "vitest";
import { tlsStatus } from "./status";

describe("tlsStatus: plain HTTP beyond loopback (the warning at start, the admins' banner)", () => {
  it.each([
    ["the default, every address", "0.0.0.0", true],
    ["every IPv6 address", "::", true],
    ["a LAN address", "192.168.1.10", true],
    ["loopback", "127.0.0.1", false],
    ["another loopback address", "127.0.0.2", false],
    ["IPv6 loopback", "::1", false],
    ["localhost", "localhost", false],
  ])("%s (HOST=%s): %s", (_rule, host, warned) => {
    expect(tlsStatus({ HOST: host }, null)).toEqual({ mode: "off", caPem: null, caFingerprint: null, plainBeyondLoopback: warned });
  });

  it("never over TLS, whatever the address", () => {
    expect(tlsStatus({ HOST: "0.0.0.0" }, { key: "", cert: "", ca: null })).toMatchObject({ mode: "files", caFingerprint: null, plainBeyondLoopback: false });
  });

  it("never behind a TLS-terminating proxy (DROVER_TLS=proxy): plain HTTP to it is the design; no CA to pin of the server's own", () => {
    expect(tlsStatus({ HOST: "0.0.0.0", DROVER_TLS: "proxy" }, null)).toEqual({ mode: "proxy", caPem: null, caFingerprint: null, plainBeyondLoopback: false });
  });
});
