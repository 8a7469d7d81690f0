/**
 * Where a run of the CLI reads and writes: stdout, stderr, stdin and the environment. The
 * program (`drover`, cli/main.ts) uses the process's own; `runCli` (cli/program.ts) can run it
 * with others, each run in its own async context, so several can run in one process at once
 * (the CLI's tests run most commands in their worker, against a real server over HTTP).
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  env: process.env,
  stdin: process.stdin,
};

const current = new AsyncLocalStorage<CliIo>();

/** The io of the run this code belongs to (the process's outside `withIo`). */
export function io(): CliIo {
  return current.getStore() ?? processIo;
}

export function withIo<T>(value: CliIo, fn: () => T): T {
  return current.run(value, fn);
}
