/**
 * `drover`: the operator REST API (/api/v1, OPERATOR_API.md) from the command line. Run it as
 * bin/drover.mjs (the build in dist/cli, `npm run build`), or `node --import tsx cli/main.ts`. Importing this module runs the CLI.
 * Exit codes: 0 ok, 1 the server refused, 2 usage, 3 not logged in / 401, 4 server unreachable.
 */
import { runCli } from "./program";

// `drover get devices | head -1`: a reader that went away is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});
process.exitCode = await runCli(process.argv);
