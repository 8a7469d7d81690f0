/**
 * The `drover` CLI against a test server, for the CLI's tests: `drover` and `ok` run a command
 * in the test's own process (`runCli`, over real HTTP to the server; a node process per
 * command cost 0.15 CPU-s and ~0.3 s on these 2 cores, ~230 of them: issue 20), `start` the
 * real program as a child process, the build tests/global-setup.ts made once for the run (as
 * it ships: one file, plain node), for what only a process shows (output as it comes, being
 * stopped, exit codes of the program itself); `file` writes a file to apply. The token
 * defaults to the server's admin token; no config file is read.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { expect, inject } from "vitest";
import { runCli } from "./program";

const ROOT = path.resolve(import.meta.dirname, "..");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  token?: string;
}

/** The real program (the build tests/global-setup.ts made) as a child process, its stdin given and closed. */
export function spawnCli(args: string[], env: Record<string, string | undefined>, input = ""): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [inject("cliBundle"), ...args], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.end(input);
  return child;
}

/** `drover ARGS` run in this process with this environment and stdin: its exit code and output. */
export async function runInProcess(args: string[], env: Record<string, string | undefined>, input = ""): Promise<Run> {
  const run: Run = { code: null, stdout: "", stderr: "" };
  const stdin = Readable.from(input ? [Buffer.from(input)] : []);
  run.code = await runCli([process.execPath, "drover", ...args], { out: (t) => void (run.stdout += t), err: (t) => void (run.stderr += t), env, stdin });
  return run;
}

export function cliRunner(target: () => { url: string; adminToken: string; dir: string }) {
  const envFor = (options: RunOptions) => {
    const t = target();
    return { ...process.env, DROVER_SERVER: t.url, DROVER_TOKEN: options.token ?? t.adminToken, DROVER_CONFIG: path.join(t.dir, "none.json") };
  };
  const start = (args: string[], options: RunOptions = {}) => {
    const child = spawnCli(args, envFor(options), options.input);
    const run: Run = { code: null, stdout: "", stderr: "" };
    child.stdout.on("data", (d: Buffer) => (run.stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (run.stderr += d.toString()));
    const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ ...run, code })));
    return { run, done, child };
  };
  const drover = (args: string[], options: RunOptions = {}) => runInProcess(args, envFor(options), options.input);
  const ok = async (args: string[], options: RunOptions = {}): Promise<string> => {
    const r = await drover(args, options);
    expect(r.code, `drover ${args.join(" ")}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const file = (name: string, text: string): string => {
    const p = path.join(target().dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  return { start, drover, ok, file };
}
