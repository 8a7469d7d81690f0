/**
 * Random bytes for secrets and unique names, from the kernel's generator (/dev/urandom, what
 * node:crypto's own generator is seeded from), so that an idle agent never loads node:crypto:
 * that module, with the WebCrypto its ESM facade pulls in, is ≈0.6 MB of the agent's RSS
 * (issue 12). Where there is no /dev/urandom, node:crypto's randomBytes.
 */
import { closeSync, openSync, readSync } from "node:fs";

export async function randomBytes(size: number): Promise<Buffer> {
  let fd: number;
  try {
    fd = openSync("/dev/urandom", "r");
  } catch {
    return (await import("node:crypto")).randomBytes(size);
  }
  try {
    const bytes = Buffer.alloc(size);
    for (let at = 0; at < size; ) {
      const read = readSync(fd, bytes, at, size - at, null);
      if (read <= 0) throw new Error("/dev/urandom: nothing to read");
      at += read;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}
