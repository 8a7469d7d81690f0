/**
 * Where the CLI keeps its login: `$DROVER_CONFIG`, else `$XDG_CONFIG_HOME/drover/config.json`
 * (`~/.config/drover/config.json`). One login at a time: {server, token, username, role,
 * expiresAt}, written atomically with mode 0600 because the token is a secret.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CliError, EXIT } from "./http";
import { io } from "./io";

export const DEFAULT_SERVER = "http://localhost:3000";

export interface StoredLogin {
  server: string;
  token: string;
  username: string;
  role: string;
  expiresAt: string;
}

type Env = Record<string, string | undefined>;

export function configPath(env: Env = io().env): string {
  if (env.DROVER_CONFIG) return path.resolve(env.DROVER_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config");
  return path.join(base, "drover", "config.json");
}

export function readLogin(file: string): StoredLogin | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`, EXIT.AUTH);
  }
  try {
    const value = JSON.parse(text) as Partial<StoredLogin>;
    if (typeof value.server !== "string" || typeof value.token !== "string") throw new Error("no server or token");
    return value as StoredLogin;
  } catch {
    throw new CliError(`${file} is not a drover login; run "drover login" to replace it`, EXIT.AUTH);
  }
}

/** Writes a temp file next to the target (mode 0600) and renames it over: never half a file. */
export function writeLogin(file: string, login: StoredLogin): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fd = fs.openSync(tmp, "w", 0o600);
    try {
      fs.writeFileSync(fd, JSON.stringify(login, null, 2) + "\n");
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
}

/** `--server`, else DROVER_SERVER, else the server of the stored login, else localhost:3000. */
export function resolveServer(flag: string | undefined, env: Env, stored: StoredLogin | null): string {
  return normalizeServer(flag ?? env.DROVER_SERVER ?? stored?.server ?? DEFAULT_SERVER);
}

export function normalizeServer(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`server "${value}" is not a URL (expected e.g. ${DEFAULT_SERVER})`, EXIT.USAGE);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CliError(`server "${value}" must be an http:// or https:// URL`, EXIT.USAGE);
  }
  return url.toString().replace(/\/+$/, "");
}

/** DROVER_TOKEN wins; otherwise the stored token, if it is for this server and not expired. */
export function resolveToken(server: string, env: Env, stored: StoredLogin | null, now = new Date()): string {
  if (env.DROVER_TOKEN) return env.DROVER_TOKEN;
  const login = `run "drover login${server === DEFAULT_SERVER ? "" : ` --server ${server}`}"`;
  if (!stored) throw new CliError(`not logged in: ${login}`, EXIT.AUTH);
  if (normalizeServer(stored.server) !== server) throw new CliError(`not logged in to ${server} (the stored login is for ${stored.server}): ${login}`, EXIT.AUTH);
  const expires = Date.parse(stored.expiresAt);
  if (Number.isFinite(expires) && expires <= now.getTime()) throw new CliError(`your login expired at ${stored.expiresAt}: ${login}`, EXIT.AUTH);
  return stored.token;
}
