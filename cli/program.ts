/**
 * The `drover` program: its commands, and `runCli`, which runs it on an argv and returns the
 * exit code (0 ok, 1 the server refused, 2 usage, 3 not logged in / 401, 4 server
 * unreachable). cli/main.ts runs it as a program; tests run it in their own process too.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { DEFAULT_SERVER } from "./config";
import { ApiError, CliError, EXIT } from "./http";
import { io, processIo, withIo, type CliIo } from "./io";
import { registerLogin } from "./commands/login";
import { registerGet } from "./commands/get";
import { registerDecisions } from "./commands/decide";
import { registerActions } from "./commands/actions";
import { registerDevices } from "./commands/devices";
import { registerEvents } from "./commands/events";
import { registerTokens } from "./commands/tokens";
import { registerApply } from "./commands/apply";
import { registerRollout } from "./commands/rollout";
import { registerPlans } from "./commands/plans";
import { registerWorkflows } from "./commands/workflows";
import { registerEnrollmentTokens } from "./commands/enrollment-tokens";

/** The package's version: from the build (scripts/build-cli.mjs defines it), else package.json beside the sources. */
declare const DROVER_CLI_VERSION: string | undefined;
function version(): string {
  if (typeof DROVER_CLI_VERSION === "string") return DROVER_CLI_VERSION;
  try {
    const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../package.json");
    return (JSON.parse(fs.readFileSync(pkg, "utf8")) as { version?: string }).version ?? "unknown";
  } catch {
    return "unknown";
  }
}

function buildProgram(): Command {
  const program = new Command("drover")
    .description("Drover fleet orchestration from the command line")
    .version(version())
    .addOption(new Option("--server <url>", `the Drover server (default: the one you logged in to, else ${DEFAULT_SERVER})`).env("DROVER_SERVER"))
    // Throw instead of exiting, for every subcommand made with .command() (the setting is inherited).
    .exitOverride()
    // Help and usage errors go where this run writes (inherited by every subcommand).
    .configureOutput({ writeOut: (text) => io().out(text), writeErr: (text) => io().err(text) })
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      `
Environment:
  DROVER_SERVER   the server, like --server
  DROVER_TOKEN    an operator token to use instead of the stored login
  DROVER_CONFIG   where the login is stored (default ~/.config/drover/config.json)

Exit codes: 0 ok, 1 the server refused, 2 usage error, 3 not logged in, 4 server unreachable.`,
    );
  registerLogin(program);
  registerGet(program);
  registerApply(program);
  registerRollout(program);
  registerPlans(program);
  registerWorkflows(program);
  registerDecisions(program);
  registerActions(program);
  registerDevices(program);
  registerEvents(program);
  registerTokens(program);
  // Last: it adds to the create, get and revoke commands the others made.
  registerEnrollmentTokens(program);
  return program;
}

/**
 * Runs `drover` with `argv` (as process.argv: node, the script, then the arguments) and
 * returns its exit code. `runIo` is where it reads and writes, the process's by default.
 */
export function runCli(argv: string[], runIo: CliIo = processIo): Promise<number> {
  return withIo(runIo, () => run(argv));
}

async function run(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return EXIT.OK;
  } catch (error) {
    // Commander has already printed its message (or the help); 0 is --help and --version.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    if (error instanceof CliError) {
      io().err(`error: ${error.message}\n`);
      if (error instanceof ApiError && error.status === 401) io().err(`run "drover login" to sign in again\n`);
      return error.exitCode;
    }
    io().err(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.REFUSED;
  }
}
