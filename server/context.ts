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
import type { FastPath } from "./devices/fast-path";

export interface ServerContext {
  db: Db;
  /** Prepared statements for the agent hot path on SQLite; null on PostgreSQL. */
  fast: FastPath | null;
  bus: Bus;
  env: Env;
  log: Logger;
  metrics: Metrics;
  /** Settings the status derivations read; restoredAt comes from the database. */
  statusSettings: StatusSettings;
  heartbeatSeconds: number;
  /** Wall clock, injectable for tests. */
  now: () => Date;
}
