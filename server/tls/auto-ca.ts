/**
 * `DROVER_TLS=auto` (issue 23): the server's own CA, made on first start, and a server
 * certificate it signs at every start for the names devices and browsers use.
 *
 * The CA lives **in the database** (`ServerState` row `tlsCa`: its certificate and private key,
 * PEM), not in a data folder: every server of a PostgreSQL cluster must present certificates of
 * one CA (a device pinned to it may reach any of them), and a database backup then restores the
 * CA its devices pin, as it restores the auth secret beside it. Servers starting at once on a
 * fresh database: the first write wins and every server reads it back. The key is read only
 * here and never served (/ca.pem serves the certificate).
 *
 * Signing needs an X.509 library (Node's crypto makes keys but signs no certificate): the
 * `Signer` is that part (signer.ts, @peculiar/x509).
 */
import os from "node:os";
import net from "node:net";
import { X509Certificate } from "node:crypto";
import type { Db } from "../db";
import type { Env } from "../env";
import type { TlsMaterial } from "./certificates";

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

/** Names a server certificate is for: DNS names and IP addresses (subjectAltName). */
export interface ServerNames {
  dns: string[];
  ips: string[];
}

export interface Signer {
  /** A new CA: a key pair and a self-signed CA certificate (ten years). */
  createCa(name: string, now: Date): Promise<CertificateAuthority>;
  /** A server certificate (a new key) for `names`, signed by `ca`, valid `days` from `now`. */
  issueServerCertificate(ca: CertificateAuthority, names: ServerNames, days: number, now: Date): Promise<{ certPem: string; keyPem: string }>;
  /**
   * A device's client certificate (issue 23) for the public key of `csrPem` (a PKCS#10 request
   * whose signature is checked; its names are ignored: the server names the device), valid
   * `seconds` from `now`. Throws `InvalidCsr` for a request that does not parse or verify.
   */
  issueClientCertificate(ca: CertificateAuthority, csrPem: string, device: { id: string; name: string }, seconds: number, now: Date): Promise<IssuedClientCertificate>;
}

export interface IssuedClientCertificate {
  certPem: string;
  /** SHA-256 of the DER, 64 lowercase hex digits: what the server looks the device up by. */
  fingerprint: string;
  serial: string;
  notAfter: Date;
}

/** The URI a device certificate names its device by (subjectAltName): `urn:drover:device:<id>`. */
export const DEVICE_URI_PREFIX = "urn:drover:device:";

const CA_KEY = "tlsCa";
/** Issued at every start; a server up this long is rare, and the renewal timer reissues before. */
export const SERVER_CERTIFICATE_DAYS = 397;

/** The cluster's CA: read, or made and stored by the first server to get there. */
export async function loadOrCreateCa(db: Db, signer: Signer, now: Date): Promise<CertificateAuthority> {
  const read = async () => {
    const row = await db.serverState.findUnique({ where: { key: CA_KEY } });
    return row ? (JSON.parse(row.value) as CertificateAuthority) : null;
  };
  const existing = await read();
  if (existing) return existing;
  const made = await signer.createCa(`Drover CA ${os.hostname()} ${now.toISOString().slice(0, 10)}`, now);
  // As authSecret: Prisma's upsert is a read then an insert on PostgreSQL, so the loser's insert fails.
  await db.serverState.create({ data: { key: CA_KEY, value: JSON.stringify(made) } }).catch(() => undefined);
  const stored = await read();
  if (!stored) throw new Error("TLS: the CA could not be stored in the database");
  return stored;
}

/**
 * The names this server is reached by: DROVER_PUBLIC_URL's host, localhost, 127.0.0.1 and ::1,
 * the machine's host name, and its interfaces' addresses.
 */
export function serverNames(env: Pick<Env, "DROVER_PUBLIC_URL" | "HOST">, hostname = os.hostname(), interfaces = os.networkInterfaces()): ServerNames {
  const dns = new Set(["localhost"]);
  const ips = new Set(["127.0.0.1", "::1"]);
  const add = (name: string) => {
    const bare = name.replace(/^\[|\]$/g, "").toLowerCase();
    if (!bare || bare === "0.0.0.0" || bare === "::") return;
    if (net.isIP(bare)) ips.add(bare);
    else dns.add(bare);
  };
  if (env.DROVER_PUBLIC_URL) add(new URL(env.DROVER_PUBLIC_URL).hostname);
  add(env.HOST);
  add(hostname);
  for (const list of Object.values(interfaces)) for (const address of list ?? []) if (!address.address.startsWith("fe80:")) add(address.address);
  return { dns: [...dns], ips: [...ips] };
}

/** The CA (made on first start) and a new server certificate it signed: what the TLS front serves. */
export async function autoTlsMaterial(db: Db, env: Pick<Env, "DROVER_PUBLIC_URL" | "HOST">, signer: Signer, now: Date): Promise<TlsMaterial & { notAfter: Date }> {
  const ca = await loadOrCreateCa(db, signer, now);
  const issued = await signer.issueServerCertificate(ca, serverNames(env), SERVER_CERTIFICATE_DAYS, now);
  const caPem = new X509Certificate(ca.certPem).toString();
  return {
    key: issued.keyPem,
    // The CA after the server's certificate: an agent pinned by fingerprint finds it there.
    cert: `${issued.certPem.trimEnd()}\n${caPem}`,
    ca: caPem,
    // The CA's key outlives restarts and is the cluster's: its tickets resume on any server, after any restart.
    ticketSecret: ca.keyPem,
    notAfter: new Date(new X509Certificate(issued.certPem).validTo),
  };
}
