/**
 * What every request meets before a handler reads a byte of its body (issue 6): deadlines for
 * headers and bodies, one body-size limit for every route, JSON-only API bodies, and a JSON
 * error for a URL that cannot be parsed. Handlers below can then trust that a body they read
 * is bounded and arrives in time.
 */
import fs from "node:fs";
import type http from "node:http";
import type https from "node:https";
import type net from "node:net";
import type { Socket } from "node:net";
import tls from "node:tls";
import { MAX_BODY_BYTES, type ErrorCode } from "../lib/protocol";
import { HTTP_STATUS } from "./errors";
import { hasBody, isJsonContentType, isYamlContentType, sendJson } from "./lib/http";
import { acceptsYaml } from "./rest/routes";
import type { Metrics } from "./metrics";

/**
 * Node's deadlines for receiving a request: its headers, then the whole request (headers and
 * body). They end once the request is received, so a held long-poll, whose request is a bare
 * GET, is not cut by them; its own `wait` bounds it. A client that trickles headers or a body
 * gets 408 and its socket closed instead of keeping it forever.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** How often Node checks those deadlines (its default, 30 s, lets a socket overstay by that). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * The process's open-file limit (Linux: /proc/self/limits), null where it cannot be read. Node
 * raises its soft limit to the hard one when it starts, so this is the hard limit (20,000 on
 * these machines).
 */
export function openFilesLimit(limits = readLimits()): number | null {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits ?? "");
  if (!m?.[1]) return null;
  return m[1] === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(m[1]);
}

function readLimits(): string | null {
  try {
    return fs.readFileSync("/proc/self/limits", "utf8");
  } catch {
    return null;
  }
}

/** Files the server keeps besides its sockets' (database, bus, logs, Next's), with room to spare. */
const OTHER_FILES = 500;

/**
 * Node refuses connections past this: the open-file limit less what the server needs besides
 * (19,500 under the 20,000 of these machines; 19,000 where the limit cannot be read): room for
 * 19,000 held polls (issue 22) with the database's files and a few operators besides.
 */
export const MAX_CONNECTIONS = Math.max(100, Math.min(65_000, (openFilesLimit() ?? 19_500) - OTHER_FILES));
/**
 * The listen queue: connections the kernel completed that the server has not yet accepted.
 * Node's default, 511, is a second's arrivals when thousands of agents reconnect at once (a
 * restart, a ramp of 19,000: issue 22); past it the kernel drops their SYNs, each agent waits 1,
 * 3, 7 s to try again, and those retries keep the queue full. The kernel caps this at
 * `net.core.somaxconn` (4,096 by default since Linux 5.4).
 */
export const LISTEN_BACKLOG = 4_096;

/** A socket that connected less than this long ago is shed only just below the connection cap (guardIdleSockets). */
const FRESH_GRACE_MS = 1_000;

/** Past this many sockets, idle ones (never spoke, or kept alive between requests) are shed. */
export const SHED_IDLE_AT = MAX_CONNECTIONS - Math.min(2_000, Math.floor(MAX_CONNECTIONS / 10));

export interface DeadlineOptions {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Tests use a small number to see shedding happen. */
  shedIdleAt?: number;
  /** Past this many sockets, even one that connected a moment ago is shed (default: 100 below the connection cap). */
  shedNewAt?: number;
}

/**
 * `listener`: the server that accepts the sockets, when it is not `server` itself (TLS: a socket
 * server in front of the https server, server/tls/front.ts): the connection cap is its.
 */
export function applyDeadlines(server: http.Server | https.Server, options: DeadlineOptions = {}, onDrop?: () => void, listener: net.Server = server): void {
  server.headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // Between requests a socket may stay open this long: above the agents' heartbeat spacing,
  // so they reuse it (the default 5 s makes them reconnect for nearly every heartbeat).
  server.keepAliveTimeout = 75_000;
  listener.maxConnections = MAX_CONNECTIONS;
  guardIdleSockets(server, server.headersTimeout, options.shedIdleAt ?? SHED_IDLE_AT, options.shedNewAt ?? MAX_CONNECTIONS - 100);
  // Past maxConnections Node drops the socket before "connection" (no shedding can help then):
  // count it, so a full server shows in /metrics rather than only as clients' resets.
  if (onDrop) listener.on("drop", onDrop);
}

/**
 * Node's deadlines start with a request's first byte: a socket that never sends one is never
 * timed out, and one kept alive after an answer stays 75 s. Enough of either fills
 * `maxConnections` and every new client is refused. So a socket that has not sent a request
 * within the header deadline is closed, and once the server holds `shedAt` sockets, a new one
 * makes room by closing the oldest idle socket: one that has not spoken for `FRESH_GRACE_MS`
 * since it connected, else one kept alive between requests, and past `shedNewAt` (just below the
 * connection cap) one that connected a moment ago. Sockets in the middle of a request, held
 * long-polls included, are never shed.
 *
 * A socket that connected a moment ago is a client about to send its request (libuv accepts a
 * burst of connections in one go, and each "connection" event runs before any of them is read);
 * a kept-alive socket costs its client a reconnect only. Issue 22, at 19,000 agents: new
 * sockets used to be shed too, the oldest first, so that once held polls alone passed `shedAt`
 * every arrival closed the one before it, and the server held no more than ≈ 17,500 polls; and
 * each arrival shed one socket only in name (the count waited for the victim's "close", a turn
 * later), so one arrival past `shedAt` shed every idle and new socket there was. A server full of
 * held polls now takes new sockets up to `shedNewAt` (a flood of silent sockets still recycles
 * itself there rather than fill the cap for a header deadline).
 */
function guardIdleSockets(server: http.Server | https.Server, firstRequestMs: number, shedAt: number, shedNewAt: number): void {
  // Insertion order is age order: the first of each is its oldest. `fresh` keeps when each
  // arrived: one sweep a second closes those past the deadline, rather than a timer per socket
  // (issue 22: what every held poll's socket kept, a Timeout and its closures).
  const fresh = new Map<Socket, number>();
  const idle = new Set<Socket>();
  let open = 0;
  const shedOne = (): boolean => {
    const oldest = fresh.entries().next().value;
    const silent = oldest && oldest[1] <= Date.now() - FRESH_GRACE_MS ? oldest[0] : undefined;
    const victim = silent ?? idle.values().next().value ?? (open > shedNewAt ? oldest?.[0] : undefined);
    if (!victim) return false;
    // Counted out now: its "close" comes a turn later.
    victim.off("close", onSocketClose);
    onSocketClose.call(victim);
    victim.destroy();
    return true;
  };
  const sweep = setInterval(() => {
    const cutoff = Date.now() - firstRequestMs;
    for (const [socket, at] of fresh) {
      if (at > cutoff) break;
      fresh.delete(socket);
      socket.destroy();
    }
  }, Math.min(1_000, firstRequestMs));
  sweep.unref();
  server.on("close", () => clearInterval(sweep));
  // Listeners shared by every socket and response (`this` is the emitter): no closure each.
  function onSocketClose(this: Socket): void {
    open--;
    fresh.delete(this);
    idle.delete(this);
  }
  function onAnswered(this: http.ServerResponse): void {
    // Node has detached the response from its socket by now; its request still knows it.
    const socket = this.req.socket;
    if (socket && !socket.destroyed) idle.add(socket);
  }
  // Over TLS the request's socket is the TLS socket, which exists once its handshake is done (the
  // handshake has its own deadline): count those.
  server.on(server instanceof tls.Server ? "secureConnection" : "connection", (socket: Socket) => {
    open++;
    while (open > shedAt && shedOne()) { /* made room */ }
    fresh.set(socket, Date.now());
    socket.on("close", onSocketClose);
  });
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    fresh.delete(socket);
    idle.delete(socket);
    res.on("finish", onAnswered);
  });
}

/** Paths whose bodies are JSON (YAML on a few operator routes) and whose handlers stream them with their own limit. */
const API_PREFIXES = ["/api/agent/", "/api/v1/", "/api/trpc/"];

function refuse(res: http.ServerResponse, metrics: Metrics, reason: string, status: number, code: ErrorCode, message: string): false {
  metrics.requestsRefused.inc({ reason });
  // The body was not read: close the connection after the answer rather than drain it.
  sendJson(res, status, { error: { code, message } }, { connection: "close" });
  return false;
}

/**
 * Answers and returns false when the request is refused at the door; true lets it in.
 * `streamsBody`: the handler for this path counts body bytes as it reads them, so a body
 * without a declared length (chunked) is safe to hand over.
 */
export function admit(req: http.IncomingMessage, res: http.ServerResponse, pathname: string, metrics: Metrics): boolean {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) {
    return refuse(res, metrics, "too-large", HTTP_STATUS.TOO_LARGE, "TOO_LARGE", `body over ${MAX_BODY_BYTES} bytes`);
  }
  if (!hasBody(req)) return true;
  const api = API_PREFIXES.some((prefix) => pathname.startsWith(prefix));
  const type = req.headers["content-type"];
  // YAML only where the operator API takes it (fleet objects); JSON everywhere else.
  const yaml = acceptsYaml(req.method, pathname);
  if (api && !isJsonContentType(type) && !(yaml && isYamlContentType(type))) {
    return refuse(
      res,
      metrics,
      "media-type",
      HTTP_STATUS.UNSUPPORTED_MEDIA_TYPE,
      "UNSUPPORTED_MEDIA_TYPE",
      `body: Content-Type must be application/json${yaml ? " or application/yaml" : ""} (got ${type ?? "none"})`,
    );
  }
  // better-auth and Next read bodies whole without a limit of their own: they get only bodies
  // whose length is declared (and checked above). Browsers always declare it.
  if (!api && declared === undefined) {
    return refuse(res, metrics, "length-required", 411, "INVALID_REQUEST", "a request body needs a Content-Length header here");
  }
  return true;
}

/** The request's URL, or null when it cannot be parsed (e.g. `GET http://[::1/`). */
export function parseRequestUrl(req: http.IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? "/", "http://drover.local");
  } catch {
    return null;
  }
}
