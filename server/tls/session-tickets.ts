/**
 * TLS session tickets that outlive the process (issue 23, item 5). Node encrypts session tickets
 * with keys drawn at random for each server (and again at each `setSecureContext`), so after a
 * restart every ticket a device holds is useless and the whole fleet reconnects with full
 * handshakes, the certificate signed and (asked for) checked each time. Here the keys are derived
 * from the private key the server already holds: the CA's under `DROVER_TLS=auto` (in the
 * database, shared by a cluster's servers), the certificate's own with `DROVER_TLS_CERT/KEY`. So a
 * restarted server, and any server of the cluster, resumes the sessions the others issued.
 *
 * Whoever holds that key can make tickets, and so pretend to be the server to a device that
 * resumes one; they can sign a certificate for its name anyway: nothing new is exposed. Resumption
 * still runs an ECDHE exchange (TLS 1.3's psk_dhe_ke, the only mode Node's client offers), so a
 * leaked ticket key decrypts no recorded traffic.
 *
 * Rotation: a key a UTC day (HKDF over the day's number), taken at midnight. Node holds one
 * ticket key at a time, so the change makes the day's tickets unusable at once: devices that
 * reconnect after it do one full handshake each, as all did before this module.
 */
import { hkdfSync } from "node:crypto";

/** How long a ticket resumes (Node's `sessionTimeout`, the ticket's lifetime hint): the key's own day at most. */
export const TICKET_LIFETIME_SECONDS = 86_400;
const WINDOW_MS = 86_400_000;

/** The number of the key window `now` falls in (days since the epoch, UTC). */
export function ticketWindow(now: Date): number {
  return Math.floor(now.getTime() / WINDOW_MS);
}

/** When the window after `now`'s begins: the next key change. */
export function nextTicketRotation(now: Date): Date {
  return new Date((ticketWindow(now) + 1) * WINDOW_MS);
}

/**
 * The 48 bytes Node's `ticketKeys` takes (a key name, an HMAC key, an AES key) for `now`'s window,
 * derived from `secretPem` (a private key, PEM): the same for every server holding that key.
 */
export function sessionTicketKeys(secretPem: string, now: Date): Buffer {
  return Buffer.from(hkdfSync("sha256", secretPem, `drover window ${ticketWindow(now)}`, "drover tls session ticket keys", 48));
}

/**
 * Tickets are resumed only within one session-id context: Node's default is a hash of the
 * process's command line, which differs between two servers started from different paths.
 */
export const SESSION_ID_CONTEXT = "drover";
