/**
 * Everything a domain function needs, passed explicitly: no module-level singletons, so a
 * test can start several servers with their own databases in one process.
 */
import type { Db } from "./db";
import type { Bus } from "./bus";
import type { Env } from "./env";
import type { Logger } from "./logger";
import type { Metrics } from "./metrics";
import type { StatusSettings } from "../lib/device-status";
import type { AgentStore } from "./devices/agent-store";
import type { DatabaseHealth } from "./database-health";
import type { TlsStatus } from "./tls/status";
import type { DeviceCa } from "./devices/certificates";

export interface ServerContext {
  db: Db;
  /**
   * The agent hot path (devices/agent-store.ts): prepared statements with group commit, one
   * implementation (agent-store-sql.ts) over SQLite's or PostgreSQL's driver. Always there: the
   * agent's side has no second implementation (issue 22).
   */
  fast: AgentStore;
  bus: Bus;
  /** Whether the database answers (`/readyz`), and since when again after an outage (the sweep's grace). */
  database: DatabaseHealth;
  env: Env;
  log: Logger;
  metrics: Metrics;
  /** Settings the status derivations read; restoredAt comes from the database. */
  statusSettings: StatusSettings;
  heartbeatSeconds: number;
  /** TLS (issue 23): on or off, the CA devices pin; updated when the certificate files change. */
  tls: TlsStatus;
  /**
   * The CA that signs devices' client certificates (issue 23): the server's own under
   * DROVER_TLS=auto, null otherwise (no device certificates then: tokens only).
   */
  deviceCa: DeviceCa | null;
  /** Wall clock, injectable for tests. */
  now: () => Date;
}
