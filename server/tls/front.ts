/**
 * One port, TLS (issue 23). The socket server that listens reads each connection's first byte:
 * 0x16 opens a TLS handshake and the connection goes to the https server; anything else is plain
 * HTTP sent to the TLS port, which a small http server answers once and closes: a console page
 * is redirected (308) to its https:// address, an API path refused in the protocol's error shape
 * (an agent or script must be told, not silently sent elsewhere).
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { TLSSocket } from "node:tls";
import { sendJson } from "../lib/http";
import { parseRequestUrl } from "../front-door";
import type { TlsMaterial } from "./certificates";
import { nextTicketRotation, SESSION_ID_CONTEXT, sessionTicketKeys, TICKET_LIFETIME_SECONDS } from "./session-tickets";

/** One year, the value browsers' preload lists ask for; no includeSubDomains (other hosts are not ours to bind). */
export const HSTS = "max-age=31536000";

/** 0x16: a TLS record of type handshake, the first byte of every ClientHello. */
const TLS_HANDSHAKE = 0x16;

/** Paths that are an API, a script or a file rather than a console page: refused over plain HTTP, never redirected. */
export function isApiPath(pathname: string): boolean {
  return pathname === "/api" || pathname.startsWith("/api/") || ["/metrics", "/healthz", "/readyz", "/install.sh", "/ca.pem"].includes(pathname);
}

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * What plain HTTP on the TLS port gets: the request's https:// address (DROVER_PUBLIC_URL's
 * origin when it is https, else the Host it came to), as a redirect for a page, as a message for
 * an API.
 */
export function answerPlainHttp(req: http.IncomingMessage, res: http.ServerResponse, publicUrl: string | undefined): void {
  const url = parseRequestUrl(req);
  const host = req.headers.host ?? "";
  const origin = publicUrl?.startsWith("https://") ? new URL(publicUrl).origin : HOST.test(host) ? `https://${host}` : null;
  const target = url && origin ? origin + url.pathname + url.search : null;
  if (!target || !url || isApiPath(url.pathname)) {
    const message = `this port speaks HTTPS only${target ? `: ${target}` : ""}`;
    return sendJson(res, 400, { error: { code: "INVALID_REQUEST", message } }, { connection: "close" });
  }
  res.writeHead(308, { location: target, "content-type": "text/plain; charset=utf-8", connection: "close" });
  res.end(`this port speaks HTTPS only: ${target}\n`);
}

export interface TlsFront {
  /** The server that listens (a plain socket server): listen, address, maxConnections, "drop". */
  listener: net.Server;
  /** Where the requests are served; its deadlines are the front door's (applyDeadlines). */
  https: https.Server;
  /** A new certificate for new connections (a renewal): those already open keep theirs. */
  setMaterial(material: TlsMaterial): void;
  close(): Promise<void>;
}

export interface TlsFrontOptions {
  /** How long a new connection may stay silent before its first byte (the header deadline). */
  firstByteTimeoutMs: number;
  connectionsCheckingInterval: number;
  publicUrl: string | undefined;
  /** Each plain HTTP request refused or redirected (metrics). */
  onPlainHttp?: () => void;
  /**
   * The CA of devices' client certificates (issue 23, DROVER_TLS=auto): the handshake asks for
   * one, never requires it (a browser is not prompted to fail), and the agent API reads the
   * verdict per request (devices/certificates.ts).
   */
  clientCa?: string | undefined;
  /** Each completed handshake: `resumed` when a session ticket spared the certificates (metrics). */
  onHandshake?: (resumed: boolean) => void;
  /** Each handshake that did not complete, by reason (metrics). */
  onHandshakeFailure?: (reason: "timeout" | "reset" | "tls") => void;
}

/** Why a handshake did not complete, from its error: its deadline, the client gone, or TLS itself. */
export function handshakeFailure(error: NodeJS.ErrnoException): "timeout" | "reset" | "tls" {
  if (error.code === "ERR_TLS_HANDSHAKE_TIMEOUT") return "timeout";
  if (error.code === "ECONNRESET" || error.code === "EPIPE" || /socket disconnected/.test(error.message)) return "reset";
  return "tls";
}

export function createTlsFront(handler: http.RequestListener, material: TlsMaterial, options: TlsFrontOptions): TlsFront {
  let current = material;
  // Session tickets any server holding the same key resumes, after a restart too (session-tickets.ts).
  const tickets = () => ({ ticketKeys: sessionTicketKeys(current.ticketSecret ?? current.key, new Date()), sessionIdContext: SESSION_ID_CONTEXT });
  const secure = https.createServer(
    // The handshake's own deadline is the header deadline: a client that starts one and stops is not kept.
    {
      key: material.key,
      cert: material.cert,
      connectionsCheckingInterval: options.connectionsCheckingInterval,
      handshakeTimeout: options.firstByteTimeoutMs,
      sessionTimeout: TICKET_LIFETIME_SECONDS,
      ...tickets(),
      ...(options.clientCa ? { requestCert: true, rejectUnauthorized: false, ca: [options.clientCa] } : {}),
    },
    handler,
  );
  if (options.onHandshake) secure.on("secureConnection", (socket: TLSSocket) => options.onHandshake?.(socket.isSessionReused()));
  if (options.onHandshakeFailure) secure.on("tlsClientError", (error: NodeJS.ErrnoException) => options.onHandshakeFailure?.(handshakeFailure(error)));
  // The day's key at midnight UTC (a timer each day: one set for longer would overflow).
  let rotation: NodeJS.Timeout;
  const scheduleRotation = () => {
    rotation = setTimeout(() => (secure.setTicketKeys(tickets().ticketKeys), scheduleRotation()), nextTicketRotation(new Date()).getTime() - Date.now() + 1_000);
    rotation.unref();
  };
  scheduleRotation();
  const plain = http.createServer({ connectionsCheckingInterval: options.connectionsCheckingInterval }, (req, res) => {
    options.onPlainHttp?.();
    answerPlainHttp(req, res, options.publicUrl);
  });
  plain.headersTimeout = options.firstByteTimeoutMs;
  plain.requestTimeout = options.firstByteTimeoutMs;
  // Sockets that have not said their first byte yet: only the listener knows them.
  const waiting = new Set<net.Socket>();
  // The two servers never listen themselves (the listener hands them sockets), and Node tracks an
  // http server's connections only from its "listening": without it, closeAllConnections() ended
  // nothing (a close waited for every held poll over TLS) and the header and request deadlines
  // were never checked inside TLS.
  const track = () => {
    secure.emit("listening");
    plain.emit("listening");
  };
  const listener = net.createServer((socket) => {
    waiting.add(socket);
    socket.setTimeout(options.firstByteTimeoutMs, () => socket.destroy());
    socket.once("close", () => waiting.delete(socket));
    socket.once("error", () => socket.destroy());
    socket.once("data", (first: Buffer) => {
      waiting.delete(socket);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) {
        // The TLS socket reads what is buffered (the first bytes) then takes the handle over: no resume.
        secure.emit("connection", socket);
      } else {
        plain.emit("connection", socket);
        socket.resume();
      }
    });
  });
  listener.once("listening", track);
  return {
    listener,
    https: secure,
    setMaterial: (next) => {
      current = next;
      // A new context: its ticket keys given again (Node would draw new random ones), from the new key when it is the secret.
      secure.setSecureContext({ key: next.key, cert: next.cert, sessionTimeout: TICKET_LIFETIME_SECONDS, ...tickets(), ...(options.clientCa ? { ca: [options.clientCa] } : {}) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(rotation);
        listener.close(() => resolve());
        for (const socket of waiting) socket.destroy();
        secure.closeAllConnections();
        plain.closeAllConnections();
        // Sockets mid-handshake are not the http layer's yet. (Closing stops the deadline checks' timers.)
        secure.close();
        plain.close();
      }),
  };
}

/** Whether the request came over TLS to this server (not through a proxy). */
export function overTls(req: http.IncomingMessage): boolean {
  return (req.socket as TLSSocket).encrypted === true;
}
