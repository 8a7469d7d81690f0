import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Tokens are random; only their SHA-256 is stored (a KDF adds nothing for 256-bit secrets). */
export function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
