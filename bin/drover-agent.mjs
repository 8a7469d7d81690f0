#!/usr/bin/env node
// The `drover-agent` command (package.json "bin"): runs agent/main.ts through tsx's loader,
// so the agent needs no build step. Same options as `npm run agent -- ...`; see --help.
// tsx is a dev dependency: a production install has none, and says where the agent is instead.
let register;
try {
  ({ register } = await import("tsx/esm/api"));
} catch {
  process.stderr.write(
    "drover-agent runs the agent from its sources with tsx, a dev dependency not installed here.\n" +
      "Install the built agent from a Drover server instead: curl -fsSL SERVER/install.sh | sudo sh\n" +
      "(or download SERVER/api/agent/v1/download and run it with node).\n",
  );
  process.exit(1);
}
register();
await import("../agent/main.ts");
