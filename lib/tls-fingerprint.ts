/**
 * A CA certificate's fingerprint as Drover shows and pins it (issue 23): the SHA-256 of the
 * certificate's DER bytes, 64 lowercase hex digits, what `openssl x509 -fingerprint -sha256`
 * prints less its colons and what `sed '1d;$d' ca.pem | base64 -d | sha256sum` prints on a device
 * without openssl. Shared by the server (which shows it) and the agent (which pins it).
 */

/** `AB:CD:…`, `abcd…` or `sha256:abcd…` as 64 lowercase hex digits; null when it is none of these. */
export function parseFingerprint(text: string): string | null {
  const hex = text
    .trim()
    .replace(/^sha256[:/]+/i, "")
    .replaceAll(":", "")
    .toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}
