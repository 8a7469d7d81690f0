/**
 * Reading from the person at the terminal: questions (prompts on stderr, so stdout stays
 * clean for output), a hidden password on a TTY, and all of stdin for --password-stdin.
 */
import readline from "node:readline";
import { Writable } from "node:stream";
import { CliError, EXIT } from "./http";
import { io } from "./io";

export const stdinIsTty = (): boolean => io().stdin.isTTY === true;

export async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io().stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export interface Prompter {
  ask(question: string): Promise<string>;
  /** Nothing is echoed on a TTY. */
  askHidden(question: string): Promise<string>;
}

/**
 * Runs `fn` with a prompter over stdin. On a TTY, readline's own line editing with echo
 * muted for hidden answers; otherwise one line of stdin per answer (buffered, so piped
 * lines that arrive together are not lost).
 */
export async function withPrompter<T>(fn: (p: Prompter) => Promise<T>): Promise<T> {
  let muted = false;
  // This run's streams, taken once: readline's callbacks need not run in the run's context.
  const { err, stdin } = io();
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (!muted) err(chunk.toString());
      callback();
    },
  });
  const tty = stdinIsTty();
  const rl = readline.createInterface({ input: stdin, output, terminal: tty });
  const lines = tty ? null : rl[Symbol.asyncIterator]();
  rl.on("SIGINT", () => {
    rl.close();
    err("\n");
    process.exit(130);
  });
  const ask = async (question: string, hidden: boolean): Promise<string> => {
    if (tty) {
      const answer = await new Promise<string>((resolve) => {
        rl.question(question, resolve);
        muted = hidden;
      });
      muted = false;
      if (hidden) err("\n");
      return answer;
    }
    err(question + "\n");
    const next = await lines?.next();
    if (!next || next.done) throw new CliError("standard input ended before an answer", EXIT.USAGE);
    return next.value;
  };
  try {
    return await fn({ ask: (q) => ask(q, false), askHidden: (q) => ask(q, true) });
  } finally {
    rl.close();
  }
}
