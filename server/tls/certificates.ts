/**
 * The server's TLS material (issue 23) from the operator's PEM files: DROVER_TLS_CERT (the
 * certificate, its chain after it), DROVER_TLS_KEY and, optionally, DROVER_TLS_CA (the CA that
 * signed it, served at /ca.pem and pinned by the install line). The files are watched and read
 * again when one changes (a renewal), so a new certificate needs no restart; a change that does
 * not make a valid pair yet (the certificate written, its key not) keeps the old one until it does.
 */
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import tls from "node:tls";
import type { Logger } from "../logger";

export interface TlsMaterial {
  key: string;
  /** The server's certificate, then the rest of its chain (PEM). */
  cert: string;
  /** The CA's certificate (PEM, one), or null when the devices trust the server's issuer already. */
  ca: string | null;
  /**
   * The private key session ticket keys are derived from (session-tickets.ts): the CA's under
   * DROVER_TLS=auto, whose server key is new at every start; unset, `key`.
   */
  ticketSecret?: string;
}

export interface TlsFiles {
  cert: string;
  key: string;
  ca?: string | undefined;
}

/** SHA-256 of a certificate's DER, lowercase hex (lib/tls-fingerprint.ts). */
export function certificateFingerprint(pem: string): string {
  return createHash("sha256").update(new X509Certificate(pem).raw).digest("hex");
}

function read(file: string, what: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/** The files as one checked pair (and CA): throws, naming the file, when they are not. */
export function readTlsFiles(files: TlsFiles): TlsMaterial {
  const cert = read(files.cert, "DROVER_TLS_CERT");
  const key = read(files.key, "DROVER_TLS_KEY");
  try {
    new X509Certificate(cert);
  } catch (error) {
    throw new Error(`DROVER_TLS_CERT ${files.cert}: not a PEM certificate (${(error as Error).message})`);
  }
  try {
    // Checks the key parses and matches the certificate ("key values mismatch").
    tls.createSecureContext({ key, cert });
  } catch (error) {
    throw new Error(`DROVER_TLS_KEY ${files.key}: not the key of ${files.cert} (${(error as Error).message})`);
  }
  if (!files.ca) return { key, cert, ca: null };
  const ca = readCa(files.ca);
  const chain = chainOf(cert);
  // A pin of a CA that did not sign this certificate would lock every device out.
  if (!chain.some((c) => c.checkIssued(ca) && c.verify(ca.publicKey))) {
    throw new Error(`DROVER_TLS_CA ${files.ca}: did not sign ${files.cert} nor any certificate of its chain`);
  }
  // The CA goes out with the chain, so an agent pinned to its fingerprint alone finds it there.
  const sent = chain.some((c) => c.fingerprint256 === ca.fingerprint256) ? cert : `${cert.trimEnd()}\n${ca.toString()}`;
  return { key, cert: sent, ca: ca.toString() };
}

function readCa(file: string): X509Certificate {
  try {
    return new X509Certificate(read(file, "DROVER_TLS_CA"));
  } catch (error) {
    if ((error as Error).message.startsWith("DROVER_TLS_CA")) throw error;
    throw new Error(`DROVER_TLS_CA ${file}: not a PEM certificate (${(error as Error).message})`);
  }
}

/**
 * DROVER_TLS_CA under DROVER_TLS=proxy (issue 23, item 4): the CA of the proxy's certificate, which
 * devices pin (/ca.pem, the install line), read once at start. Its certificate must be a CA's:
 * the server has no certificate of its own to check it against, as readTlsFiles does.
 */
export function readProxyCa(file: string): string {
  const ca = readCa(file);
  if (!ca.ca) throw new Error(`DROVER_TLS_CA ${file}: not a CA certificate (basicConstraints CA:TRUE): name the CA that signed the proxy's certificate`);
  return ca.toString();
}

/** Every certificate of a PEM text, in order. */
function chainOf(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((block) => new X509Certificate(block));
}

/**
 * Watches the files (a stat each `intervalMs`: it follows symlinks and renames, as a renewal
 * writes them) and calls `onChange` with each new valid material.
 */
export function watchTlsFiles(files: TlsFiles, onChange: (material: TlsMaterial) => void, log: Logger, intervalMs = 1_000): { stop(): void } {
  const paths = [files.cert, files.key, ...(files.ca ? [files.ca] : [])];
  const changed = (current: fs.Stats, previous: fs.Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    try {
      const material = readTlsFiles(files);
      onChange(material);
      log.info({ cert: files.cert }, "TLS: certificate files changed; new connections get the new certificate");
    } catch (error) {
      log.warn({ err: (error as Error).message }, "TLS: the certificate files changed but do not make a valid pair yet; keeping the previous one");
    }
  };
  for (const file of paths) fs.watchFile(file, { interval: intervalMs, persistent: false }, changed);
  return {
    stop: () => {
      for (const file of paths) fs.unwatchFile(file, changed);
    },
  };
}
