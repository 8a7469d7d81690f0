/**
 * A private PostgreSQL cluster that a test may stop and start (the fault tests of issue 22): its
 * own data directory under the repository's `.tmp/`, its own free port, Debian's binaries, the
 * settings of scripts/postgres-for-tests.sh (durability off). PostgreSQL refuses to run as root,
 * so as root (CI, these machines) its commands run as the `postgres` user, which then owns the
 * directory. Never the shared test cluster on 5432: stopping that would fail everyone's tests.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import pg from "pg";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** Debian's layout; DROVER_TEST_PG_BIN points elsewhere. */
export const PG_BIN = process.env.DROVER_TEST_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export interface PrivateCluster {
  port: number;
  /** postgresql://…/NAME on this cluster (trust authentication, loopback only). */
  url(database?: string): string;
  /** Asynchronous: a server in this process keeps answering while PostgreSQL stops and starts. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): void;
}

const asRoot = process.getuid?.() === 0;

function command(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", path.join(PG_BIN, bin), ...args]] : [path.join(PG_BIN, bin), args];
}
const run = (bin: string, args: string[]) => void execFileSync(...command(bin, args), { stdio: ["ignore", "pipe", "pipe"] });
const runAsync = async (bin: string, args: string[]) => void (await promisify(execFile)(...command(bin, args)));

export const privatePgAvailable = fs.existsSync(path.join(PG_BIN, "pg_ctl"));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  fs.mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, ".tmp", "pg-private-"));
  const data = path.join(dir, "data");
  if (asRoot) execFileSync("chown", ["postgres", dir]);
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]);
  const port = await freePort();
  // The socket in the cluster's own folder, TCP on loopback only; no flush worth waiting for.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const start = () => runAsync("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-o", options, "-w", "-t", "30", "start"]);
  // Fast: every session is ended (57P01 admin_shutdown), as a real stop or failover does.
  const stop = () => runAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
  await start();
  const url = (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    start,
    stop,
    destroy() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"]);
      } catch {
        // already stopped
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a database on the cluster. */
export async function createDatabase(cluster: PrivateCluster, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: cluster.url() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return cluster.url(name);
}
