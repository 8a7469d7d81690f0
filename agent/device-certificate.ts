/**
 * The device's own key and its certificate signing request (issue 23). The key is an EC P-256
 * pair made by Node's crypto; it never leaves the device. The request is PKCS#10 written here
 * in DER by hand: Node signs but makes no CSR, and an X.509 library would add ≈ 100 KiB to the
 * single-file agent for these few dozen bytes of ASN.1 (openssl checks the output in the test).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from "node:crypto";

/** A new device key, PKCS#8 PEM. */
export function newDeviceKey(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x100) return Buffer.from([0x81, n]);
  return Buffer.from([0x82, n >> 8, n & 0xff]);
}

/** One DER element: tag, length, contents. */
function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const SEQUENCE = 0x30;
const SET = 0x31;
/** id-at-commonName, 2.5.4.3 */
const COMMON_NAME = Buffer.from([0x06, 0x03, 0x55, 0x04, 0x03]);
/** ecdsa-with-SHA256, 1.2.840.10045.4.3.2 */
const ECDSA_SHA256 = Buffer.from([0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);

/**
 * A PKCS#10 request (RFC 2986) for `keyPem`'s public key, subject CN=`name`, signed by the key.
 * The server ignores the subject (it names the device itself); it is there for people reading it.
 */
export function certificateRequest(keyPem: string, name: string): string {
  const key = createPrivateKey(keyPem);
  if (key.asymmetricKeyType !== "ec") throw new Error("device key: an EC key is needed");
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const subject = der(SEQUENCE, der(SET, der(SEQUENCE, COMMON_NAME, der(0x0c, Buffer.from(name, "utf8")))));
  // version 0, subject, subjectPKInfo, attributes [0] (none)
  const info = der(SEQUENCE, Buffer.from([0x02, 0x01, 0x00]), subject, spki, Buffer.from([0xa0, 0x00]));
  const signature = sign("sha256", info, key); // DER ECDSA-Sig-Value, Node's default for EC keys
  const request = der(SEQUENCE, info, der(SEQUENCE, ECDSA_SHA256), der(0x03, Buffer.from([0x00]), signature));
  const base64 = request.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN CERTIFICATE REQUEST-----\n${base64}\n-----END CERTIFICATE REQUEST-----\n`;
}
