/**
 * The `drover` CLI as a child process against a test server, for the CLI's tests: the build
 * tests/global-setup.ts made once for the run (as it ships: one file, plain node), one runner
 * (its output as it comes, and its exit), `ok` for a command that must succeed, `file` for a
 * file to apply. The token defaults to the server's admin token; no config file is read.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, inject } from "vitest";

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

export function cliRunner(target: () => { url: string; adminToken: string; dir: string }) {
  const start = (args: string[], options: RunOptions = {}) => {
    const t = target();
    const env = { ...process.env, DROVER_SERVER: t.url, DROVER_TOKEN: options.token ?? t.adminToken, DROVER_CONFIG: path.join(t.dir, "none.json") };
    const child = spawn(process.execPath, [inject("cliBundle"), ...args], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.end(options.input ?? "");
    const run: Run = { code: null, stdout: "", stderr: "" };
    child.stdout.on("data", (d: Buffer) => (run.stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (run.stderr += d.toString()));
    const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ ...run, code })));
    return { run, done, child };
  };
  const drover = (args: string[], options: RunOptions = {}) => start(args, options).done;
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
