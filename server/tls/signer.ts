/**
 * The server's own certificate signing for `DROVER_TLS=auto` (issue 23), on @peculiar/x509: a
 * maintained X.509 library over WebCrypto (Node's crypto makes keys and parses certificates but
 * signs none). ECDSA P-256 keys, SHA-256 signatures, random positive serial numbers.
 *
 * The CA: self-signed, ten years, a CA with no CA below it (pathLen 0), for signing
 * certificates only. A server certificate: the names in subjectAltName, serverAuth, not a CA,
 * linked to its CA by the key identifiers.
 */
import "reflect-metadata";
import { createHash, createPrivateKey, KeyObject, randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { DEVICE_URI_PREFIX, type CertificateAuthority, type ServerNames, type Signer } from "./auto-ca";

x509.cryptoProvider.set(webcrypto as Crypto);

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const CA_YEARS = 10;
const DAY_MS = 86_400_000;

/** 16 random bytes as hex, the first bit cleared: a positive serial number no one else issued. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString("hex");
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
}

function privateKeyPem(key: CryptoKey): string {
  return KeyObject.from(key).export({ type: "pkcs8", format: "pem" }).toString();
}

/** A CA's private key from its PEM, as WebCrypto signs with it. */
function signingKey(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ type: "pkcs8", format: "der" });
  return webcrypto.subtle.importKey("pkcs8", der, ALGORITHM, false, ["sign"]) as Promise<CryptoKey>;
}

/** A name for a distinguished name's CN: the characters RFC 4514 would have escaped, left out. */
const commonName = (name: string) => `CN=${name.replace(/[,+"\\<>;=]/g, " ")}`;

/** A certificate signing request refused: it does not parse, is not EC P-256 or RSA, or its signature is wrong. */
export class InvalidCsr extends Error {}

/** Requests larger than this are no CSR of a device key (a P-256 one is ≈ 400 bytes of PEM). */
export const MAX_CSR_CHARS = 8192;

/** The request parsed and its signature verified (proof the sender holds the private key). */
export async function verifiedCsr(csrPem: string): Promise<x509.Pkcs10CertificateRequest> {
  if (csrPem.length > MAX_CSR_CHARS) throw new InvalidCsr(`csr: longer than ${MAX_CSR_CHARS} characters`);
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch {
    throw new InvalidCsr("csr: not a PKCS#10 certificate request in PEM (-----BEGIN CERTIFICATE REQUEST-----)");
  }
  const ok = await csr.verify().catch(() => false);
  if (!ok) throw new InvalidCsr("csr: its signature does not verify with its own public key");
  return csr;
}

export const x509Signer: Signer = {
  async createCa(name, now) {
    const keys = await newKeys();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serialNumber(),
      name: commonName(name),
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + CA_YEARS * 365 * DAY_MS),
      signingAlgorithm: ALGORITHM,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return { certPem: cert.toString("pem"), keyPem: privateKeyPem(keys.privateKey) };
  },

  async issueServerCertificate(ca: CertificateAuthority, names: ServerNames, days: number, now: Date) {
    const keys = await newKeys();
    const caCert = new x509.X509Certificate(ca.certPem);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: "CN=drover",
      issuer: caCert.subject,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + days * DAY_MS),
      signingAlgorithm: ALGORITHM,
      publicKey: keys.publicKey,
      signingKey: await signingKey(ca.keyPem),
      extensions: [
        new x509.SubjectAlternativeNameExtension([...names.dns.map((value) => ({ type: "dns" as const, value })), ...names.ips.map((value) => ({ type: "ip" as const, value }))]),
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
    return { certPem: cert.toString("pem"), keyPem: privateKeyPem(keys.privateKey) };
  },

  async issueClientCertificate(ca, csrPem, device, seconds, now) {
    const csr = await verifiedCsr(csrPem);
    const caCert = new x509.X509Certificate(ca.certPem);
    const publicKey = await csr.publicKey.export();
    const notAfter = new Date(now.getTime() + seconds * 1000);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      // The server names the device; whatever the request said is ignored.
      subject: commonName(device.name),
      issuer: caCert.subject,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter,
      signingAlgorithm: ALGORITHM,
      publicKey,
      signingKey: await signingKey(ca.keyPem),
      extensions: [
        new x509.SubjectAlternativeNameExtension([{ type: "url", value: `${DEVICE_URI_PREFIX}${device.id}` }]),
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
        await x509.SubjectKeyIdentifierExtension.create(publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
    return {
      certPem: cert.toString("pem"),
      fingerprint: createHash("sha256").update(Buffer.from(cert.rawData)).digest("hex"),
      serial: cert.serialNumber,
      notAfter: cert.notAfter,
    };
  },
};
