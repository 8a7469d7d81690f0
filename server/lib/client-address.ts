/**
 * Who is on the other end of a request: the socket's peer, unless that peer is a proxy the
 * operator named in DROVER_TRUSTED_PROXIES. Only then are forwarded headers believed, and only
 * as far back as the chain stays trusted (the right-most untrusted hop of X-Forwarded-For is
 * the client). Without this, a client picks its own address with one header and walks past
 * every per-address limit.
 */
import net from "node:net";
import type { IncomingMessage } from "node:http";

/**
 * The server writes the client's address into this request header before any handler runs
 * (overwriting whatever the client sent), so better-auth's own limits and every Drover
 * handler read the same address.
 */
export const CLIENT_ADDRESS_HEADER = "x-drover-client-address";

/** `127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`, comma-separated. */
export function parseTrustedProxies(text: string | undefined): net.BlockList {
  const list = new net.BlockList();
  for (const raw of (text ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const [address = "", bits] = raw.split("/");
    const family = net.isIPv6(address) ? "ipv6" : net.isIPv4(address) ? "ipv4" : null;
    if (!family) throw new Error(`not an IP address or CIDR range: "${raw}"`);
    if (bits === undefined) list.addAddress(address, family);
    else {
      const prefix = Number(bits);
      const max = family === "ipv4" ? 32 : 128;
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`bad prefix length in "${raw}"`);
      list.addSubnet(address, prefix, family);
    }
  }
  return list;
}

/** `::ffff:1.2.3.4` is 1.2.3.4: one client, one key. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address.toLowerCase();
}

/**
 * Each list's answers by address. A list is never changed once parsed, and `check` builds a
 * SocketAddress every call (≈ 20 µs: 3 % of a server's CPU with 10,000 agents, issue 22), while
 * the peers of a server are few: thousands of devices behind a handful of addresses, or one
 * address each. Bounded: cleared when full.
 */
const verdicts = new WeakMap<net.BlockList, Map<string, boolean>>();
const VERDICTS_KEPT = 10_000;

function isTrusted(list: net.BlockList, address: string): boolean {
  let known = verdicts.get(list);
  if (!known) verdicts.set(list, (known = new Map()));
  let trusted = known.get(address);
  if (trusted === undefined) {
    const family = net.isIPv6(address) ? "ipv6" : net.isIPv4(address) ? "ipv4" : null;
    trusted = family !== null && list.check(address, family);
    if (known.size >= VERDICTS_KEPT) known.clear();
    known.set(address, trusted);
  }
  return trusted;
}

/** The socket's peer, when it is a proxy named in DROVER_TRUSTED_PROXIES; else null. */
export function trustedProxyPeer(req: IncomingMessage, trusted: net.BlockList): string | null {
  const peer = normalizeAddress(req.socket.remoteAddress ?? "");
  return isTrusted(trusted, peer) ? peer : null;
}

/** The client's address as this server should believe it. */
export function clientAddress(req: IncomingMessage, trusted: net.BlockList): string {
  const peer = normalizeAddress(req.socket.remoteAddress ?? "unknown");
  if (!isTrusted(trusted, peer)) return peer;
  const header = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((s) => normalizeAddress(s.trim()))
    .filter((s) => net.isIP(s) !== 0);
  // Walk from the nearest hop back; the first one we do not trust is the client.
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!isTrusted(trusted, hop)) return hop;
  }
  return hops[0] ?? peer;
}

/** Whether the request reached us over TLS (directly, or at a trusted proxy that says so). */
export function isHttps(req: IncomingMessage, trusted: net.BlockList): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  const peer = normalizeAddress(req.socket.remoteAddress ?? "");
  if (!isTrusted(trusted, peer)) return false;
  const proto = req.headers["x-forwarded-proto"];
  return (Array.isArray(proto) ? proto[0] : proto)?.split(",")[0]?.trim().toLowerCase() === "https";
}
