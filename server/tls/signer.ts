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
import { createPrivateKey, KeyObject, randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import type { CertificateAuthority, ServerNames, Signer } from "./auto-ca";

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
};
