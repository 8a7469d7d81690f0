#!/usr/bin/env node
// The `drover-agent` command (package.json "bin"): runs agent/main.ts through tsx's loader,
// so the agent needs no build step. Same options as `npm run agent -- ...`; see --help.
import { register } from "tsx/esm/api";

register();
await import("../agent/main.ts");
