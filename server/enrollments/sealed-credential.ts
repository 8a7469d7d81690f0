/**
 * The credential an enrollment gave out (a device token, or issue 23's certificate), kept so that
 * the same agent can be given it again: an answer lost on its way (the agent's own timeout under
 * load, a cut connection, a state directory it could not write) otherwise left the agent unable
 * ever to enroll (`token.lost`), with no way for the server to know the answer never arrived.
 *
 * Sealed with AES-256-GCM under a key derived (HKDF-SHA-256) from the enrollment secret, which
 * only the agent holds: the row keeps the secret's SHA-256 for checking it, never the secret, so
 * a reader of the database cannot open a sealed token. Given again only while the device has
 * never been seen (enrollments.ts): once it has used its credential, the secret opens nothing.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** What an approved enrollment's answer carries. */
export type Credential = { token: string } | { certificate: string };

const SALT = "drover.enrollment-credential.v1";

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, SALT, "", 32));
}

export function sealCredential(secret: string, credential: Credential): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(credential), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The credential, or null when `secret` is not the one it was sealed under (or the text is not a sealed credential). */
export function openCredential(secret: string, sealed: string): Credential | null {
  try {
    const bytes = Buffer.from(sealed, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
    const value = JSON.parse(plain) as Record<string, unknown>;
    if (typeof value.token === "string") return { token: value.token };
    if (typeof value.certificate === "string") return { certificate: value.certificate };
    return null;
  } catch {
    return null;
  }
}
