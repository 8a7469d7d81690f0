/**
 * `drover`: the operator REST API (/api/v1, OPERATOR_API.md) from the command line. Run it as
 * bin/drover.mjs (the build in dist/cli, `npm run build`), or `node --import tsx cli/main.ts`. Importing this module runs the CLI.
 * Exit codes: 0 ok, 1 the server refused, 2 usage, 3 not logged in / 401, 4 server unreachable.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { DEFAULT_SERVER } from "./config";
import { ApiError, CliError, EXIT } from "./http";
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

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return EXIT.OK;
  } catch (error) {
    // Commander has already printed its message (or the help); 0 is --help and --version.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    if (error instanceof CliError) {
      process.stderr.write(`error: ${error.message}\n`);
      if (error instanceof ApiError && error.status === 401) process.stderr.write(`run "drover login" to sign in again\n`);
      return error.exitCode;
    }
    process.stderr.write(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.REFUSED;
  }
}

// `drover get devices | head -1`: a reader that went away is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});
process.exitCode = await main(process.argv);
