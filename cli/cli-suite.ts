/**
 * The shared set-up of the CLI's tests with a stored login (cli.test.ts, cli-actions.test.ts,
 * cli-help.test.ts: one file was the suite's longest, one worker's worth): a real server, a
 * folder, the admin's login file; `drover` runs a command in this process (`runInProcess`,
 * test-support.ts), or, with `process: true`, as the real program (the build
 * tests/global-setup.ts made), as `start` always does. Call `cliSuite()` at a top level.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { startTestServer, ADMIN_PASSWORD, type TestServer } from "../tests/helpers/server";
import { enrollmentBody, newSecret, uniqueName } from "../tests/helpers/devices";
import type { Action } from "./types";
import { runInProcess, spawnCli, type Run } from "./test-support";

export const ROOT = path.resolve(import.meta.dirname, "..");

export interface CliSuite {
  s: TestServer;
  dir: string;
  /** The admin's login, shared by most tests. */
  config: string;
}

/** `login`: log the admin in before the file's tests (those that do not test login itself). */
export function cliSuite(options: { login?: boolean } = {}) {
  const state = {} as CliSuite;
  beforeAll(async () => {
    state.s = await startTestServer();
    state.dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-"));
    state.config = path.join(state.dir, "admin", "config.json");
    if (options.login) await ok(["login", "--username", "admin", "--password-stdin"], { input: `${ADMIN_PASSWORD}\n` });
  });
  afterAll(async () => {
    await state.s?.close();
    if (state.dir) fs.rmSync(state.dir, { recursive: true, force: true });
  });
  interface RunOptions {
    env?: Record<string, string | undefined>;
    input?: string;
    /** Run the real program as a child process rather than in this one. */
    process?: boolean;
  }

  function envFor(options: RunOptions): Record<string, string> {
    const merged: Record<string, string | undefined> = { ...process.env, DROVER_SERVER: state.s.url, DROVER_CONFIG: state.config, DROVER_TOKEN: undefined, ...options.env };
    return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
  }

  function start(args: string[], options: RunOptions = {}): ChildProcess {
    return spawnCli(args, envFor(options), options.input);
  }

  function collect(child: ChildProcess): { out: () => string; err: () => string; done: Promise<number | null> } {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    return { out: () => stdout, err: () => stderr, done };
  }

  async function drover(args: string[], options: RunOptions = {}): Promise<Run> {
    if (!options.process) return runInProcess(args, envFor(options), options.input);
    const c = collect(start(args, options));
    const code = await c.done;
    return { code, stdout: c.out(), stderr: c.err() };
  }

  /** Runs and expects exit 0, with stderr in the failure message. */
  async function ok(args: string[], options: RunOptions = {}): Promise<string> {
    const r = await drover(args, options);
    expect(r.code, `drover ${args.join(" ")}\n${r.stderr}`).toBe(0);
    return r.stdout;
  }

  const json = <T>(text: string) => JSON.parse(text) as T;

  async function pendingEnrollment(labels: Record<string, string> = {}): Promise<{ id: string; name: string }> {
    const name = uniqueName("pend");
    const res = await state.s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, newSecret(), labels));
    expect(res.body.status).toBe("Pending");
    return { id: res.body.enrollmentId, name };
  }

  async function createAction(device: string, requireApproval = true): Promise<string> {
    // "ping" is not in the server's DROVER_APPROVAL_KINDS: requireApproval decides.
    const res = await state.s.api<{ items: Action[] }>("POST", "/actions", { device, kind: "ping", args: {}, requireApproval });
    expect(res.status).toBe(201);
    return res.body.items[0]!.id;
  }

  async function freePort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  return { state, start, collect, drover, ok, json, pendingEnrollment, createAction, freePort };
}
