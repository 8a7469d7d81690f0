#!/usr/bin/env node
// The `drover` command (package.json "bin"): runs cli/main.ts through tsx's loader, so the
// CLI needs no build step. See `drover --help`.
import { register } from "tsx/esm/api";

register();
await import("../cli/main.ts");
