/**
 * What the rest of the server knows of TLS (issue 23, `ctx.tls`): whether it is on, the CA the
 * devices pin (served at /ca.pem, shown on the Add devices page), and whether this server
 * speaks plain HTTP beyond its own machine (a warning at start, a banner for admins).
 */
import type { Env } from "../env";
import { isLoopbackHost } from "../auth/sign-in-guard";
import { certificateFingerprint, type TlsMaterial } from "./certificates";

export interface TlsStatus {
  /** `proxy`: TLS ends at a proxy in front (DROVER_TLS=proxy), which holds the server's certificate. */
  mode: "off" | "files" | "auto" | "proxy";
  /** The CA's certificate, PEM, or null when the server's certificate is from a CA devices already trust. */
  caPem: string | null;
  /** Its SHA-256 (lib/tls-fingerprint.ts). */
  caFingerprint: string | null;
  /** Plain HTTP on an address other machines reach. */
  plainBeyondLoopback: boolean;
}

/** `proxyCa`: under DROVER_TLS=proxy, the CA of the proxy's certificate (DROVER_TLS_CA), if any. */
export function tlsStatus(env: Pick<Env, "HOST"> & Partial<Pick<Env, "DROVER_TLS">>, material: TlsMaterial | null, proxyCa: string | null = null): TlsStatus {
  const caPem = material?.ca ?? proxyCa;
  return {
    mode: env.DROVER_TLS === "proxy" ? "proxy" : !material ? "off" : env.DROVER_TLS === "auto" ? "auto" : "files",
    caPem,
    caFingerprint: caPem ? certificateFingerprint(caPem) : null,
    // HOST is where the server listens: loopback (localhost, 127.0.0.0/8, ::1) is this machine only. Behind a
    // TLS-terminating proxy plain HTTP to it is the operator's stated design (its network is theirs to guard).
    plainBeyondLoopback: !material && env.DROVER_TLS !== "proxy" && !isLoopbackHost(env.HOST),
  };
}
