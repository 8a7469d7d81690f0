import os from "node:os";
import type { Command } from "commander";
import { configPath, writeLogin } from "../config";
import { serverOf, storedLogin, write } from "../context";
import { Api, ApiError, CliError, EXIT } from "../http";
import { readAllStdin, withPrompter } from "../prompt";
import type { TokenResponse } from "../types";

export function registerLogin(program: Command): void {
  program
    .command("login")
    .description("sign in and store an operator token (in $DROVER_CONFIG or ~/.config/drover/config.json)")
    .option("-u, --username <name>", "username (asked when not given)")
    .option("--password-stdin", "read the password from standard input")
    .option("--token-name <name>", "what the token is called in `drover get tokens` (default: this host's name)")
    .addHelpText("after", "\nExamples:\n  drover login --server https://drover.example.com\n  echo \"$PASSWORD\" | drover login -u admin --password-stdin")
    .action(async (opts: { username?: string; passwordStdin?: boolean; tokenName?: string }, cmd: Command) => {
      const stored = (() => {
        try {
          return storedLogin();
        } catch {
          return null; // a broken file is about to be replaced
        }
      })();
      const server = serverOf(cmd, stored);
      let { username } = opts;
      let password: string;
      if (opts.passwordStdin) {
        if (!username) cmd.error("error: --password-stdin needs --username", { exitCode: EXIT.USAGE });
        password = (await readAllStdin()).replace(/\r?\n$/, "");
      } else {
        ({ username, password } = await withPrompter(async (p) => ({
          username: username ?? (await p.ask("Username: ")).trim(),
          password: await p.askHidden("Password: "),
        })));
      }
      if (!username || !password) throw new CliError("username and password must not be empty", EXIT.USAGE);

      let answer: TokenResponse;
      try {
        const name = (opts.tokenName ?? tokenNameForHost()).trim() || undefined;
        answer = await new Api({ server }).call("post", "/auth/token", { body: { username, password, name } });
      } catch (error) {
        // Here a 401 means wrong credentials, not "run drover login".
        if (error instanceof ApiError && error.status === 401) throw new CliError(`${error.code}: ${error.detail}`, EXIT.AUTH);
        throw error;
      }
      const file = configPath();
      writeLogin(file, { server, token: answer.token, username: answer.username, role: answer.role, expiresAt: answer.expiresAt });
      write(`Logged in to ${server} as ${answer.username} (${answer.role}); the token expires ${answer.expiresAt}.\n`);
    });
}

/** The host's name, so that a list of tokens says which machine each one lives on. */
function tokenNameForHost(): string {
  // Printable only and at most 64 characters: what the server accepts as a name.
  return `drover@${os.hostname()}`.replace(/\p{Cc}/gu, "").slice(0, 64);
}
