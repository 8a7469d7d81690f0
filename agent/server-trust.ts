/**
 * How the agent knows it talks to its own server over TLS (issue 23). By default Node's trust
 * store (a public CA). `--ca-file`: that CA alone. `--ca-fingerprint`: a pin of the CA (the
 * SHA-256 of its certificate, lib/tls-fingerprint.ts): before the first request the agent opens
 * a TLS connection, looks for a certificate with that fingerprint in the chain the server
 * presents, and from then on trusts that CA alone, with the usual checks of signature, dates and
 * name. Nothing is sent to a server whose chain lacks the pinned CA, and a forged certificate
 * that merely carries a copy of the CA (a CA certificate is public) fails those checks. With
 * both, the file must be the pinned CA.
 */
import { createHash, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { PeerCertificate } from "node:tls";

export class PinnedCaError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PinnedCaError";
  }
}

export const sha256Of = (der: Buffer): string => createHash("sha256").update(der).digest("hex");

/** TLS verification failures (OpenSSL's codes, Node's name check) that a pinned agent explains. */
const VERIFY_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

export interface ServerTrustOptions {
  caFile?: string | undefined;
  caFingerprint?: string | undefined;
}

export class ServerTrust {
  /** The CA trusted alone: from --ca-file at once, from the server's chain once found. */
  private ca: string | null;
  private finding: Promise<string> | null = null;

  /** Throws PinnedCaError when the file cannot be read or is not the pinned CA. */
  constructor(readonly options: ServerTrustOptions) {
    this.ca = options.caFile ? readCaFile(options.caFile, options.caFingerprint) : null;
  }

  /** Whether this agent trusts only its own CA (else the default trust store). */
  get pinned(): boolean {
    return this.options.caFile !== undefined || this.options.caFingerprint !== undefined;
  }

  /** The CA to trust for `url` (undefined: the default store); finds a pinned CA in the server's chain first. */
  async caFor(url: URL): Promise<string | undefined> {
    if (this.ca || !this.options.caFingerprint) return this.ca ?? undefined;
    this.finding ??= findPinnedCa(url, this.options.caFingerprint).finally(() => (this.finding = null));
    this.ca = await this.finding;
    return this.ca;
  }

  /** An error of a request to the server, said in the pin's words when TLS verification refused it. */
  explain(error: unknown): unknown {
    const code = (error as { code?: unknown } | null)?.code;
    if (!this.pinned || typeof code !== "string" || !VERIFY_CODES.has(code)) return error;
    const pin = this.options.caFingerprint ?? (this.ca ? sha256Of(new X509Certificate(this.ca).raw) : "?");
    return new PinnedCaError(`server certificate is not signed by the pinned CA (sha256 ${pin}): ${(error as Error).message} (${code})`, { cause: error });
  }
}

function readCaFile(file: string, pin: string | undefined): string {
  let pem: string;
  let fingerprint: string;
  try {
    pem = readFileSync(file, "utf8");
    fingerprint = sha256Of(new X509Certificate(pem).raw);
  } catch (error) {
    throw new PinnedCaError(`--ca-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  if (pin !== undefined && fingerprint !== pin) {
    throw new PinnedCaError(`--ca-file ${file} is not the pinned CA: its sha256 is ${fingerprint}, --ca-fingerprint is ${pin}`);
  }
  return pem;
}

/** The certificates the server presented, its own first, each once. */
function chainOf(peer: PeerCertificate & { issuerCertificate?: PeerCertificate }): PeerCertificate[] {
  const chain: PeerCertificate[] = [];
  for (let cert: (PeerCertificate & { issuerCertificate?: PeerCertificate }) | undefined = peer; cert?.raw && !chain.includes(cert); cert = cert.issuerCertificate) chain.push(cert);
  return chain;
}

/** A TLS handshake only (no request): the pinned CA's certificate from the server's chain, as PEM. */
async function findPinnedCa(url: URL, pin: string): Promise<string> {
  const tls = await import("node:tls");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      // SNI takes a name, never an address.
      ...(isIP(host) ? {} : { servername: host }),
      // Checked below by the pin, then by the usual verification against the CA found.
      rejectUnauthorized: false,
      timeout: 30_000,
    });
    const fail = (error: Error) => (socket.destroy(), reject(error));
    socket.once("timeout", () => fail(new Error(`${url.host}: no TLS handshake within 30 s`)));
    socket.once("error", fail);
    socket.once("secureConnect", () => {
      const chain = chainOf(socket.getPeerCertificate(true));
      socket.end();
      const found = chain.find((c) => sha256Of(c.raw) === pin);
      if (found) return resolve(new X509Certificate(found.raw).toString());
      const presented = chain.map((c) => `${c.subject?.CN ?? "?"} (sha256 ${sha256Of(c.raw)})`).join(" <- ");
      reject(new PinnedCaError(`server certificate is not signed by the pinned CA (sha256 ${pin}): ${url.host} presented ${presented || "no certificate"}`));
    });
  });
}
