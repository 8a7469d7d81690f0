/**
 * The server's environment, read and validated once (../shared/OPERATOR_API.md).
 */
import type { BlockList } from "node:net";
import { z } from "zod";
import { parseSelector, SelectorError } from "../lib/label-selector";
import { parseTrustedProxies } from "./lib/client-address";

const selector = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value.trim() === "") return null;
    try {
      return { text: value, requirements: parseSelector(value) };
    } catch (e) {
      ctx.addIssue({ code: "custom", message: e instanceof SelectorError ? e.message : String(e) });
      return z.NEVER;
    }
  });

/** Comma-separated IP addresses and CIDR ranges, as a BlockList to check against. */
const addressList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      try {
        return parseTrustedProxies(value);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: e instanceof Error ? e.message : String(e) });
        return z.NEVER;
      }
    });

const isEmptyList = (list: BlockList) => list.rules.length === 0;

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  /** `file:./x.db` (embedded SQLite, the default) or `postgresql://user:pass@host:port/db` (issue 11). */
  DATABASE_URL: z
    .string()
    .default("file:./data/drover.db")
    .refine((u) => u.startsWith("file:") || /^postgres(ql)?:\/\/[^/]+\/[^/?]+/.test(u), "file:PATH (SQLite) or postgresql://USER:PASSWORD@HOST:PORT/DATABASE"),
  /** PostgreSQL only: connections in Prisma's pool (the agent hot path has its own pool of the same size). */
  DROVER_PG_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  DROVER_ADMIN_PASSWORD: z.string().min(8, "must be at least 8 characters").optional(),
  DROVER_DISCONNECTION_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(300),
  /** Heartbeat interval told to agents; never more than a third of the disconnection timeout. */
  DROVER_HEARTBEAT_SECONDS: z.coerce.number().int().positive().default(30),
  DROVER_AUTO_APPROVE: selector,
  DROVER_EXCLUDE_FROM_PLANS: z
    .string()
    .optional()
    .transform((v) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.enum(["controller", "worker"]))),
  /** Action kinds that always wait for an operator's approval (seed 004 PENDING_APPROVE). */
  DROVER_APPROVAL_KINDS: z
    .string()
    .default("exec,reboot,update")
    .transform((v) => v.split(",").map((s) => s.trim()).filter(Boolean)),
  /**
   * Four eyes (issue 21): nobody approves work they requested themselves (an action or request
   * they created, a plan they submitted, a step of a workflow they wrote or started). Off by
   * default: a fresh install has one admin, who could then approve nothing at all.
   */
  DROVER_FOUR_EYES: z
    .enum(["0", "1", "true", "false", ""])
    .default("0")
    .transform((v) => v === "1" || v === "true"),
  /**
   * Concurrency policies for actions: JSON `[{"selector": "drover/role=controller", "max": 1}]`.
   * At most `max` devices matching `selector` run actions at once. Selectors see the device's
   * labels plus `drover/role` (controller or worker).
   */
  DROVER_ACTION_CONCURRENCY: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (!value?.trim()) return [];
      try {
        const parsed = z.array(z.object({ selector: z.string().min(1), max: z.number().int().min(1) })).parse(JSON.parse(value));
        return parsed.map((p) => ({ text: p.selector, requirements: parseSelector(p.selector), max: p.max }));
      } catch (e) {
        ctx.addIssue({ code: "custom", message: `expected JSON [{"selector": "...", "max": N}]: ${e instanceof Error ? e.message : String(e)}` });
        return z.NEVER;
      }
    }),
  /** How often the safety sweep runs (DESIGN.md §1). */
  DROVER_SWEEP_SECONDS: z.coerce.number().positive().default(2),
  /** Secret for signing session cookies; generated and kept in the database when unset. */
  DROVER_AUTH_SECRET: z.string().min(32).optional(),
  /** The agent build served at /api/agent/v1/download (issue 12); default dist/agent, built on first request. */
  DROVER_AGENT_DIST: z.string().min(1).optional(),
  /** The oldest agent version this server supports (the console warns about older ones); default lib/agent-version.ts DEFAULT_MIN_AGENT_VERSION. */
  DROVER_MIN_AGENT_VERSION: z.string().regex(/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/, "a version such as 1.2.3").optional(),
  /** Public URL of the console, for cookie and origin checks; defaults to the request's host. */
  DROVER_PUBLIC_URL: z.string().url().optional(),
  /**
   * Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (IPs or CIDRs). Nobody's by
   * default: the socket's peer is the client, whatever headers it sends.
   */
  DROVER_TRUSTED_PROXIES: addressList(""),
  /** Sign-ins (successful or not) one client address may make a minute: a coarse wall; guessing is the login throttle's job. */
  DROVER_SIGN_IN_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(30),
  // Password guessing (server/auth/login-throttle.ts): failures before an account, or one client
  // address over every account, is locked.
  DROVER_LOGIN_ACCOUNT_LIMIT: z.coerce.number().int().min(1).max(1_000).default(5),
  DROVER_LOGIN_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Held long-polls (work and enrollment waits) the whole server keeps; past it, 429. */
  DROVER_MAX_HELD_POLLS: z.coerce.number().int().min(1).default(15_000),
  /**
   * `POST /status` requests inside the server at once (authenticating, reading, queued for their
   * group commit); past it, 429 before the body is read (issue 22 item 4: a slow database costs time, not memory).
   */
  DROVER_MAX_HEARTBEATS_IN_FLIGHT: z.coerce.number().int().min(1).default(1_000),
  /**
   * `POST /enrollments` requests inside the server at once; past it, 429 before the body is read,
   * so that a fleet enrolling at once is spread over minutes instead of queuing past its agents'
   * timeouts (and the operators' requests behind it).
   */
  DROVER_MAX_ENROLLMENTS_IN_FLIGHT: z.coerce.number().int().min(1).default(64),
  /** Held work polls one device token keeps; a new one past it answers the oldest at once. */
  DROVER_MAX_POLLS_PER_DEVICE: z.coerce.number().int().min(1).default(2),
  /** Who may read /metrics without a token: addresses and CIDRs (default loopback only). */
  DROVER_METRICS_ALLOW: addressList("127.0.0.1,::1"),
  /** A bearer token that opens /metrics from anywhere (for a Prometheus elsewhere). */
  DROVER_METRICS_TOKEN: z.string().min(16).optional(),
  /** Pending enrollment requests one client address may have open; past it, 429. */
  DROVER_ENROLLMENT_PENDING_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
  /** Pending enrollment requests the server keeps in all; past it, 429. */
  DROVER_ENROLLMENT_PENDING_MAX: z.coerce.number().int().min(1).default(5_000),
  /** Seconds between two samples of the fleet's metrics (the overview's charts, server/overview/history.ts). */
  DROVER_METRICS_SAMPLE_SECONDS: z.coerce.number().min(0.05).max(3600).default(60),
  /** Days of those samples kept; older ones are pruned at each sample. */
  DROVER_METRICS_RETENTION_DAYS: z.coerce.number().positive().max(3650).default(7),
  /**
   * TLS (issue 23): a certificate and its private key, PEM files (the certificate file may hold
   * the chain after it), read again when either changes. Unset: plain HTTP (the quick start).
   */
  DROVER_TLS_CERT: z.string().min(1).optional(),
  /**
   * `auto`: the server makes its own CA on first start (kept in the database) and its certificate from it (server/tls/auto-ca.ts).
   * `proxy` (issue 23, item 4): TLS ends at a proxy in front (nginx, a load balancer) that holds the server's certificate; this
   * server speaks plain HTTP to it and keeps the same CA as `auto`, to sign devices' client certificates, which the proxy
   * forwards in DROVER_CLIENT_CERT_HEADER. Needs DROVER_TRUSTED_PROXIES.
   */
  DROVER_TLS: z.enum(["", "off", "auto", "proxy"]).default(""),
  DROVER_TLS_KEY: z.string().min(1).optional(),
  /**
   * With DROVER_TLS_CERT: the certificate of the CA that signed it (PEM), served at /ca.pem and
   * pinned by the console's install line. With DROVER_TLS=proxy: the CA of the proxy's
   * certificate, the same way. Unset: devices check the server against their own trust store (a
   * public CA).
   */
  DROVER_TLS_CA: z.string().min(1).optional(),
  /**
   * Device bearer tokens (issue 23): `accept` (the default for one release, so installed agents
   * move over to a client certificate on their next start) or `refuse` (certificates only).
   */
  DROVER_DEVICE_TOKENS: z.enum(["accept", "refuse"]).default("accept"),
  /**
   * Under DROVER_TLS=proxy, the request header the proxy (DROVER_TRUSTED_PROXIES) puts the device's client certificate in (issue 23, item 4): URL-escaped
   * PEM (nginx's `$ssl_client_escaped_cert`, Envoy's `%DOWNSTREAM_PEER_CERT%`) or RFC 9440's `:base64 DER:`. The server checks it
   * as it checks one from its own handshake; from any other peer a request carrying it is refused (devices/certificates.ts).
   */
  DROVER_CLIENT_CERT_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, "a header name such as X-Client-Cert")
    .default("x-client-cert")
    .transform((name) => name.toLowerCase()),
  /** Lifetime of a device's client certificate, seconds (30 days); the agent renews past two thirds of it. */
  DROVER_DEVICE_CERT_SECONDS: z.coerce.number().int().min(10).max(397 * 86_400).default(30 * 86_400),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
}).superRefine((env, ctx) => {
  if (Boolean(env.DROVER_TLS_CERT) !== Boolean(env.DROVER_TLS_KEY)) {
    ctx.addIssue({ code: "custom", path: [env.DROVER_TLS_CERT ? "DROVER_TLS_KEY" : "DROVER_TLS_CERT"], message: "DROVER_TLS_CERT and DROVER_TLS_KEY go together" });
  }
  if (env.DROVER_TLS === "auto" && (env.DROVER_TLS_CERT || env.DROVER_TLS_KEY || env.DROVER_TLS_CA)) {
    ctx.addIssue({ code: "custom", path: ["DROVER_TLS"], message: "auto makes the server's own CA and certificate: unset DROVER_TLS_CERT, DROVER_TLS_KEY and DROVER_TLS_CA, or unset DROVER_TLS" });
  }
  if (env.DROVER_TLS === "proxy" && (env.DROVER_TLS_CERT || env.DROVER_TLS_KEY)) {
    ctx.addIssue({ code: "custom", path: ["DROVER_TLS"], message: "proxy: the proxy in front holds the server's certificate and this server speaks plain HTTP to it; unset DROVER_TLS_CERT and DROVER_TLS_KEY" });
  }
  // The device's certificate arrives in a header believed only from a trusted proxy: without one, no device could present it.
  if (env.DROVER_TLS === "proxy" && isEmptyList(env.DROVER_TRUSTED_PROXIES)) {
    ctx.addIssue({ code: "custom", path: ["DROVER_TRUSTED_PROXIES"], message: "DROVER_TLS=proxy needs the proxy's address here (e.g. 127.0.0.1): the device's certificate is read only from it" });
  }
  if (env.DROVER_TLS_CA && !env.DROVER_TLS_CERT && env.DROVER_TLS !== "proxy") {
    ctx.addIssue({ code: "custom", path: ["DROVER_TLS_CA"], message: "needs DROVER_TLS_CERT and DROVER_TLS_KEY (or DROVER_TLS=proxy: then it is the CA of the proxy's certificate)" });
  }
  // Without the server's own CA no device certificate is ever signed: refusing tokens would lock every device out.
  if (env.DROVER_DEVICE_TOKENS === "refuse" && env.DROVER_TLS !== "auto" && env.DROVER_TLS !== "proxy") {
    ctx.addIssue({ code: "custom", path: ["DROVER_DEVICE_TOKENS"], message: "refuse needs DROVER_TLS=auto or proxy (the CA that signs device certificates); without it devices have only tokens" });
  }
});

export type Env = z.infer<typeof EnvSchema>;

export function readEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n");
    throw new Error(`Invalid environment:\n${lines}`);
  }
  return parsed.data;
}

export function heartbeatSeconds(env: Pick<Env, "DROVER_HEARTBEAT_SECONDS" | "DROVER_DISCONNECTION_TIMEOUT_SECONDS">): number {
  return Math.max(1, Math.min(env.DROVER_HEARTBEAT_SECONDS, Math.floor(env.DROVER_DISCONNECTION_TIMEOUT_SECONDS / 3)));
}
