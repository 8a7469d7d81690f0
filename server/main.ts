/**
 * Drover's one server process: the console (Next.js), tRPC, better-auth, the operator REST
 * API, the agent API (lean node:http path for the long-poll), /metrics, and the controllers.
 *
 *   npm start                   production: node dist/server/main.mjs, this file bundled by
 *                               `npm run build` (prestart builds what is missing or outdated)
 *   tsx server/main.ts --dev    from the sources, Next in development mode (npm run dev)
 */
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { toNodeHandler, fromNodeHeaders } from "better-auth/node";
import { readEnv, heartbeatSeconds, type Env } from "./env";
import { openDb, sqlitePath, type Db } from "./db";
import { WriteGate } from "./write-gate";
import { SqlAgentStore } from "./devices/agent-store-sql";
import { SqliteDriver } from "./devices/sqlite-driver";
import { PgDriver } from "./devices/pg-driver";
import { migrate } from "./migrate";
import { createBus } from "./bus-pg";
import { logger as rootLogger } from "./logger";
import { createMetrics } from "./metrics";
import type { ServerContext } from "./context";
import { authSecret, createAuth, ensureAdmin, principalFromSession, principalFromToken, type Auth } from "./auth/auth";
import { appRouter } from "./trpc/router";
import { createAgentApi } from "./agent-api/handler";
import { createRestApi, REST_BASE } from "./rest/handler";
import { AGENT_API_BASE, MAX_BODY_BYTES } from "../lib/protocol";
import { startControllers } from "./controllers";
import { reportHeartbeats } from "./overview/history";
import { RateLimiter, sendError, sendJson } from "./lib/http";
import { AppError, databaseUnavailable, invalid, TRPC_CODE } from "./errors";
import { DatabaseHealth } from "./database-health";
import { TRPCError } from "@trpc/server";
import { clientAddress, CLIENT_ADDRESS_HEADER, isHttps } from "./lib/client-address";
import { installScript } from "./agent-dist/artifact";
import { admit, applyDeadlines, HEADERS_TIMEOUT_MS, LISTEN_BACKLOG, parseRequestUrl, TIMEOUT_CHECK_INTERVAL_MS, type DeadlineOptions } from "./front-door";
import { readProxyCa, readTlsFiles, watchTlsFiles, type TlsMaterial } from "./tls/certificates";
import { autoTlsMaterial, loadOrCreateCa } from "./tls/auto-ca";
import type { DeviceCa } from "./devices/certificates";
import { x509Signer } from "./tls/signer";
import { createTlsFront, HSTS, overTls, type TlsFront } from "./tls/front";
import { tlsStatus } from "./tls/status";
import { sameHash, sha256 } from "./lib/crypto";
import { ROOT } from "./paths";
import { growHeapByHalf, reclaimAfterBursts } from "./heap";

import type { Principal } from "./auth/roles";

export interface StartOptions {
  env?: Partial<Record<keyof Env, string>>;
  /** Serve the console through Next (false in API-only tests). */
  console?: boolean;
  dev?: boolean;
  /** Skip the migrations (server/migrate.ts: the database is already at the schema). */
  skipMigrate?: boolean;
  /** Shorter request deadlines for tests (front-door.ts has the defaults). */
  deadlines?: DeadlineOptions;
}

export interface RunningServer {
  url: string;
  port: number;
  ctx: ServerContext;
  auth: Auth;
  /** One controllers' tick now (server/controllers.ts): false when another server leads. */
  tick(): Promise<boolean>;
  /** The step close() is in (controllers, http server, heartbeat reports, console, agent store, bus, database), else null. */
  readonly closing: string | null;
  close(): Promise<void>;
}

async function loadRestoredAt(db: Db): Promise<Date | null> {
  const row = await db.serverState.findUnique({ where: { key: "restoredAt" } });
  return row ? new Date(row.value) : null;
}

/** Pages anyone may see; everything else of the console needs a session. */
function isPublicPage(pathname: string): boolean {
  return pathname === "/login" || pathname.startsWith("/_next/") || pathname === "/favicon.ico" || /\.(svg|png|ico|css|js|txt|woff2?)$/.test(pathname);
}

/** CSRF: a cookie-authenticated mutation must come from this origin (SameSite=Lax already blocks most). */
function sameOrigin(req: http.IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin) return req.headers["sec-fetch-site"] === undefined || req.headers["sec-fetch-site"] === "same-origin";
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/**
 * The process's heap settings (server/heap.ts): `before` the server starts, the heap's growth;
 * `running`, a burst's leftovers reclaimed, each logged and counted by it.
 */
export const tuneServerHeap = {
  before: growHeapByHalf,
  running: (running: RunningServer): { stop(): void } =>
    reclaimAfterBursts(({ before, after, ms }) => {
      running.ctx.metrics.heapReclaims.inc();
      const mb = (n: number) => Math.round(n / 2 ** 20);
      running.ctx.log.info({ committedMb: [mb(before.committed), mb(after.committed)], usedMb: [mb(before.used), mb(after.used)], ms: Math.round(ms) }, "heap: a burst's leftovers reclaimed");
    }),
};

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const env = readEnv({ ...process.env, ...options.env });
  const log = rootLogger.child({}, { level: env.LOG_LEVEL });
  // TLS (issue 23): the operator's certificate files, checked before anything else starts.
  const tlsFiles = env.DROVER_TLS_CERT && env.DROVER_TLS_KEY ? { cert: env.DROVER_TLS_CERT, key: env.DROVER_TLS_KEY, ca: env.DROVER_TLS_CA } : null;
  let tlsMaterial: TlsMaterial | null = tlsFiles ? readTlsFiles(tlsFiles) : null;
  // Behind a TLS-terminating proxy: the CA of its certificate, for devices to pin (issue 23, item 4).
  const proxyCa = env.DROVER_TLS === "proxy" && env.DROVER_TLS_CA ? readProxyCa(env.DROVER_TLS_CA) : null;
  if (!options.skipMigrate) await migrate(env.DATABASE_URL, { log });
  const gate = new WriteGate();
  const db = await openDb(env.DATABASE_URL, gate, { pgPoolSize: env.DROVER_PG_POOL_SIZE });
  const metrics = createMetrics();
  // DROVER_TLS=auto: the cluster's CA from the database (made on the first start), a new certificate from it.
  let autoNotAfter: Date | null = null;
  let deviceCa: DeviceCa | null = null;
  if (env.DROVER_TLS === "auto") {
    const auto = await autoTlsMaterial(db, env, x509Signer, new Date());
    tlsMaterial = auto;
    autoNotAfter = auto.notAfter;
  }
  // The same CA signs devices' client certificates (issue 23): the one CA whose key the server holds. Behind a
  // TLS-terminating proxy (`proxy`) it is the same CA, kept in the database, with no server certificate of its own.
  if (env.DROVER_TLS === "auto" || env.DROVER_TLS === "proxy") deviceCa = { ca: await loadOrCreateCa(db, x509Signer, new Date()), signer: x509Signer };
  const file = sqlitePath(env.DATABASE_URL);
  // The agent hot path (devices/agent-store-sql.ts) over SQLite's second connection, or a pg pool.
  const fast = new SqlAgentStore(
    file ? new SqliteDriver(file, gate) : new PgDriver(env.DATABASE_URL, { onError: (err) => log.warn({ err }, "agent store: an idle PostgreSQL connection failed") }),
  );
  metrics.watch("storeWritesQueued", () => fast.queued);
  const ctx: ServerContext = {
    db,
    fast,
    bus: await createBus(env.DATABASE_URL, { db, log }),
    database: new DatabaseHealth({ ping: () => db.$queryRawUnsafe("SELECT 1"), now: () => ctx.now(), log }),
    env,
    log,
    metrics,
    statusSettings: { disconnectionTimeoutSeconds: env.DROVER_DISCONNECTION_TIMEOUT_SECONDS, restoredAt: await loadRestoredAt(db) },
    heartbeatSeconds: heartbeatSeconds(env),
    tls: tlsStatus(env, tlsMaterial, proxyCa),
    deviceCa,
    now: () => new Date(),
  };
  const auth = createAuth(db, await authSecret(db, env.DROVER_AUTH_SECRET), ctx, { accountLimit: env.DROVER_LOGIN_ACCOUNT_LIMIT, addressLimit: env.DROVER_LOGIN_ADDRESS_LIMIT });
  await ensureAdmin(auth, db, env.DROVER_ADMIN_PASSWORD, log);

  const agentApi = createAgentApi(ctx);
  const restApi = createRestApi(ctx, auth);
  // better-auth answers a failed database query with its own 500 (its message, or none): when
  // the database does not answer a probe either, that is the protocol's 503 with Retry-After.
  const authHandler = toNodeHandler(async (request: Request) => {
    const response = await auth.handler(request);
    if (response.status < 500 || (await ctx.database.ready())) return response;
    const app = databaseUnavailable();
    return Response.json({ error: { code: app.code, message: app.message } }, { status: app.status, headers: { "retry-after": String(app.retryAfterSeconds) } });
  });

  async function principalOf(req: http.IncomingMessage): Promise<Principal | null> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    if (bearer?.[1]) return principalFromToken(db, bearer[1], ctx.now());
    return principalFromSession(auth, fromNodeHeaders(req.headers));
  }

  const addressOf = (req: http.IncomingMessage) => String(req.headers[CLIENT_ADDRESS_HEADER]);
  /** The client address's turn from `limiter`; false when it had none (its 429 is answered). */
  const admitted = (limiter: RateLimiter, req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    try {
      limiter.take(addressOf(req));
      return true;
    } catch (error) {
      sendError(res, error);
      return false;
    }
  };

  /** /metrics: from an allowed address (loopback by default), or with the metrics token. */
  // `curl -fsSL SERVER/install.sh | sudo sh` (issue 12): the script with this server's URL in
  // it, as the device will reach it (DROVER_PUBLIC_URL, else the Host the request came to).
  const installLimiter = new RateLimiter(2, 30);
  const sendInstall = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!admitted(installLimiter, req, res)) return;
    const host = req.headers.host ?? `localhost:${env.PORT}`;
    // The host goes into a shell script: a name or address and a port, nothing else.
    if (!env.DROVER_PUBLIC_URL && !/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) {
      return void sendError(res, invalid("Host: not a host name or address with an optional port"));
    }
    const origin = env.DROVER_PUBLIC_URL ?? `${isHttps(req, env.DROVER_TRUSTED_PROXIES) ? "https" : "http"}://${host}`;
    const text = installScript(origin, ctx.tls.caPem);
    res.writeHead(200, { "content-type": "text/x-shellscript; charset=utf-8", "content-length": Buffer.byteLength(text), "cache-control": "no-cache" });
    res.end(req.method === "HEAD" ? undefined : text);
  };

  // GET /ca.pem (issue 23): the CA devices pin, public like the script that pins it (its key never leaves the server).
  const caLimiter = new RateLimiter(2, 30);
  const sendCa = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!admitted(caLimiter, req, res)) return;
    const pem = ctx.tls.caPem;
    if (!pem) {
      const why =
        ctx.tls.mode === "off"
          ? "this server speaks plain HTTP (no TLS)"
          : ctx.tls.mode === "proxy"
            ? "TLS ends at the proxy in front (DROVER_TLS=proxy) and DROVER_TLS_CA, the CA of its certificate, is unset"
            : "its certificate is from a CA devices trust already (DROVER_TLS_CA is unset)";
      return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no CA to pin: ${why}` } });
    }
    res.writeHead(200, { "content-type": "application/x-pem-file", "content-length": Buffer.byteLength(pem), "cache-control": "no-cache", "x-drover-ca-sha256": ctx.tls.caFingerprint ?? "" });
    res.end(req.method === "HEAD" ? undefined : pem);
  };

  const metricsAllowed = (req: http.IncomingMessage): boolean => {
    const token = env.DROVER_METRICS_TOKEN;
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (token && bearer) return sameHash(sha256(bearer), sha256(token));
    const address = addressOf(req);
    const family = net.isIP(address);
    return family !== 0 && env.DROVER_METRICS_ALLOW.check(address, family === 6 ? "ipv6" : "ipv4");
  };

  const trpcHandler = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    createContext: async ({ req }) => {
      try {
        return { server: ctx, auth, principal: await principalOf(req), clientAddress: addressOf(req) };
      } catch (error) {
        // Before any procedure: a database that cannot be asked is 503 here too, not tRPC's 500.
        if (!ctx.database.noteError(error)) throw error;
        const app = databaseUnavailable();
        throw new TRPCError({ code: TRPC_CODE[app.code], message: app.message, cause: app });
      }
    },
    // Counted as it streams in: a chunked body gets no further than the limit either.
    maxBodySize: MAX_BODY_BYTES,
    // A 429 tells when to come back, as on the REST and agent surfaces.
    responseMeta: ({ errors }) => {
      const wait = errors.map((e) => (e.cause instanceof AppError ? e.cause.retryAfterSeconds : undefined)).find((w) => w !== undefined);
      return wait === undefined ? {} : { headers: { "retry-after": String(Math.ceil(wait)) } };
    },
    onError: ({ error, path: p }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") log.error({ err: error, path: p }, "tRPC error");
    },
  });

  let next: { handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>; close: () => Promise<void> } | null = null;
  if (options.console !== false) {
    const { default: createNext } = await import("next");
    const app = createNext({ dev: options.dev ?? false, dir: ROOT, quiet: true });
    await app.prepare();
    const handle = app.getRequestHandler();
    next = { handle: (req, res) => handle(req, res), close: () => app.close() };
  }

  const handle: http.RequestListener = (req, res) => {
    // Decided once, from the socket (and trusted proxies only); a client cannot set it.
    req.headers[CLIENT_ADDRESS_HEADER] = clientAddress(req, env.DROVER_TRUSTED_PROXIES);
    // Browsers keep to https:// for this host from now on (ignored over plain HTTP, so sent only over TLS).
    if (overTls(req)) res.setHeader("strict-transport-security", HSTS);
    const url = parseRequestUrl(req);
    if (!url) {
      metrics.requestsRefused.inc({ reason: "bad-url" });
      return sendJson(res, 400, { error: { code: "INVALID_REQUEST", message: "the request URL cannot be parsed" } }, { connection: "close" });
    }
    const p = url.pathname;
    if (!admit(req, res, p, metrics)) return;
    // The protocol's error shape: 503 with Retry-After when the database cannot be asked, else 500; never the driver's words.
    const fail = (err: unknown) => {
      if (!ctx.database.noteError(err)) log.error({ err, path: p }, "request failed");
      sendError(res, err);
    };
    if (p.startsWith(AGENT_API_BASE + "/") || p === AGENT_API_BASE) return void agentApi(req, res, url).catch(fail);
    if (p.startsWith(REST_BASE + "/") || p === REST_BASE) return void restApi(req, res, url).catch(fail);
    if (p.startsWith("/api/trpc/")) {
      if (req.method === "POST" && !req.headers.authorization && !sameOrigin(req)) {
        return sendJson(res, 403, { error: { code: "FORBIDDEN", message: "cross-origin request refused" } });
      }
      return trpcHandler(req, res);
    }
    if (p.startsWith("/api/auth/")) return void authHandler(req, res).catch(fail);
    if (p === "/metrics") {
      if (!metricsAllowed(req)) {
        return sendJson(res, 403, { error: { code: "FORBIDDEN", message: "/metrics: not from this address; send DROVER_METRICS_TOKEN as a bearer token" } });
      }
      return void metrics
        .render()
        .then((text) => {
          res.writeHead(200, { "content-type": metrics.contentType });
          res.end(text);
        })
        .catch(fail);
    }
    // Liveness: the process answers. Readiness: it can serve, i.e. its database answers (cached 1 s).
    if (p === "/healthz") return sendJson(res, 200, { ok: true });
    if (p === "/readyz") {
      return void ctx.database.ready().then((ready) =>
        ready ? sendJson(res, 200, { ok: true }) : sendJson(res, 503, { ok: false, reason: "database unreachable" }, { "retry-after": "1" }),
      );
    }
    if (p === "/install.sh" && (req.method === "GET" || req.method === "HEAD")) return void sendInstall(req, res);
    if (p === "/ca.pem" && (req.method === "GET" || req.method === "HEAD")) return void sendCa(req, res);
    // Every API prefix answers in the protocol's error shape, never with a console page.
    if (!next || p === "/api" || p.startsWith("/api/")) return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `${req.method} ${p} not found` } });
    const pages = next;
    if (isPublicPage(p)) return void pages.handle(req, res).catch(fail);
    principalFromSession(auth, fromNodeHeaders(req.headers))
      .then((principal) => {
        if (!principal) {
          res.writeHead(307, { location: `/login?next=${encodeURIComponent(p + url.search)}` });
          return void res.end();
        }
        return pages.handle(req, res);
      })
      .catch(fail);
  };
  const onDrop = () => metrics.requestsRefused.inc({ reason: "max-connections" });
  let server: net.Server;
  let front: TlsFront | null = null;
  if (tlsMaterial) {
    front = createTlsFront(handle, tlsMaterial, {
      firstByteTimeoutMs: options.deadlines?.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      publicUrl: env.DROVER_PUBLIC_URL,
      onPlainHttp: () => metrics.requestsRefused.inc({ reason: "plain-http" }),
      clientCa: deviceCa?.ca.certPem,
      onHandshake: (resumed) => metrics.tlsHandshakes.inc({ session: resumed ? "resumed" : "new" }),
      onHandshakeFailure: (reason) => metrics.tlsHandshakeFailures.inc({ reason }),
    });
    applyDeadlines(front.https, options.deadlines, onDrop, front.listener);
    server = front.listener;
  } else {
    const plain = http.createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS }, handle);
    applyDeadlines(plain, options.deadlines, onDrop);
    server = plain;
  }
  // A renewal: new connections get the new certificate, and /ca.pem and the console the new CA.
  const certificateWatch = tlsFiles
    ? watchTlsFiles(tlsFiles, (material) => (front?.setMaterial(material), Object.assign(ctx.tls, tlsStatus(env, material))), log)
    : null;
  // DROVER_TLS=auto: a server up for most of a year gets a new certificate a month before its own ends.
  const renewal =
    autoNotAfter
      ? setInterval(() => {
          if (!autoNotAfter || autoNotAfter.getTime() - Date.now() > 30 * 86_400_000) return;
          autoTlsMaterial(db, env, x509Signer, new Date()).then(
            (next) => (front?.setMaterial(next), (autoNotAfter = next.notAfter), log.info({ notAfter: next.notAfter }, "TLS: a new server certificate from the CA")),
            (err: unknown) => log.warn({ err }, "TLS: could not renew the server certificate; trying again tomorrow"),
          );
        }, 86_400_000).unref()
      : null;

  const controllers = startControllers(ctx);
  // On PostgreSQL, after the first try for the controller lock (server/leader.ts).
  await controllers.ready;
  // Every server, for the leader's overview history (server/overview/history.ts).
  const heartbeatReports = reportHeartbeats(ctx);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // A listen queue of LISTEN_BACKLOG rather than Node's 511 (the kernel caps it at net.core.somaxconn).
    server.listen({ port: env.PORT, host: env.HOST, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  const url = `${tlsMaterial ? "https" : "http"}://localhost:${port}`;
  let closing: string | null = null;
  log.info({ url, database: env.DATABASE_URL.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@") }, "Drover is listening");
  if (ctx.tls.plainBeyondLoopback) {
    log.warn(
      { host: env.HOST, port },
      `PLAIN HTTP on ${env.HOST}:${port}: device tokens, operator tokens, session cookies and the install script cross the network in the clear. ` +
        "Set DROVER_TLS_CERT and DROVER_TLS_KEY, or HOST=127.0.0.1 to listen on this machine only (docs/architecture.md, TLS)",
    );
  }
  if (ctx.tls.caFingerprint) log.info({ caFingerprint: ctx.tls.caFingerprint }, `TLS: devices pin this server's CA, sha256 ${ctx.tls.caFingerprint} (served at /ca.pem)`);

  return {
    url,
    port,
    ctx,
    auth,
    tick: () => controllers.tick(),
    get closing() {
      return closing;
    },
    async close() {
      // Step by step, each named while it runs: a close that hangs says where (`closing`).
      const steps: [string, () => Promise<unknown>][] = [
        ["controllers", async () => (ctx.database.close(), await controllers.stop())],
        [
          "http server",
          async () => {
            certificateWatch?.stop();
            if (renewal) clearInterval(renewal);
            if (front) return front.close();
            const plain = server as http.Server;
            await new Promise<void>((resolve) => (plain.close(() => resolve()), plain.closeAllConnections()));
          },
        ],
        ["heartbeat reports", () => heartbeatReports.stop()],
        ["console", async () => next?.close().catch(() => undefined)],
        ["agent store", async () => fast?.close()],
        ["bus", () => ctx.bus.close()],
        ["database", () => db.$disconnect()],
      ];
      for (const [name, step] of steps) {
        closing = name;
        await step();
      }
      closing = null;
    },
  };
}

async function main(): Promise<void> {
  tuneServerHeap.before();
  const dev = process.argv.includes("--dev");
  const running = await startServer({ dev });
  const heap = tuneServerHeap.running(running);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    rootLogger.info({ signal }, "shutting down");
    heap.stop();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    rootLogger.fatal({ err }, "Drover failed to start");
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
