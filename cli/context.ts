/**
 * What every command needs: the API client for the chosen server with the stored (or
 * DROVER_TOKEN) token, and small helpers for writing output and shared options.
 */
import { Option, type Command } from "commander";
import { configPath, readLogin, resolveServer, resolveToken, type StoredLogin } from "./config";
import { Api } from "./http";
import { FORMATS, type Format } from "./output";
import { io } from "./io";

export function storedLogin(): StoredLogin | null {
  try {
    return readLogin(configPath());
  } catch (error) {
    // A token from the environment does not need the file; otherwise a broken file is an error.
    if (io().env.DROVER_TOKEN) return null;
    throw error;
  }
}

/** The server a command talks to: --server / DROVER_SERVER, else the login's, else localhost. */
export function serverOf(cmd: Command, stored: StoredLogin | null = storedLogin()): string {
  return resolveServer(cmd.optsWithGlobals<{ server?: string }>().server, io().env, stored);
}

/** An authenticated client; exits 3 (with what to do) when there is no usable login. */
export function apiFor(cmd: Command): Api {
  const stored = storedLogin();
  const server = serverOf(cmd, stored);
  return new Api({ server, token: resolveToken(server, io().env, stored) });
}

export const outputOption = () => new Option("-o, --output <format>", "output format").choices(FORMATS).default("table");

export function write(text: string): void {
  io().out(text);
}

export function note(text: string): void {
  io().err(text.endsWith("\n") ? text : text + "\n");
}

export type { Format };
