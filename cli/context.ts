/**
 * What every command needs: the API client for the chosen server with the stored (or
 * DROVER_TOKEN) token, and small helpers for writing output and shared options.
 */
import { Option, type Command } from "commander";
import { configPath, readLogin, resolveServer, resolveToken, type StoredLogin } from "./config";
import { Api } from "./http";
import { FORMATS, type Format } from "./output";

export function storedLogin(): StoredLogin | null {
  try {
    return readLogin(configPath());
  } catch (error) {
    // A token from the environment does not need the file; otherwise a broken file is an error.
    if (process.env.DROVER_TOKEN) return null;
    throw error;
  }
}

/** The server a command talks to: --server / DROVER_SERVER, else the login's, else localhost. */
export function serverOf(cmd: Command, stored: StoredLogin | null = storedLogin()): string {
  return resolveServer(cmd.optsWithGlobals<{ server?: string }>().server, process.env, stored);
}

/** An authenticated client; exits 3 (with what to do) when there is no usable login. */
export function apiFor(cmd: Command): Api {
  const stored = storedLogin();
  const server = serverOf(cmd, stored);
  return new Api({ server, token: resolveToken(server, process.env, stored) });
}

export const outputOption = () => new Option("-o, --output <format>", "output format").choices(FORMATS).default("table");

export function write(text: string): void {
  process.stdout.write(text);
}

export function note(text: string): void {
  process.stderr.write(text.endsWith("\n") ? text : text + "\n");
}

export type { Format };
