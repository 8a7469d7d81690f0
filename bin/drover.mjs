#!/usr/bin/env node
// The `drover` command (package.json "bin"): the built CLI (dist/cli/drover.mjs, made by
// `npm run build`), or, in a checkout without a build, cli/main.ts through tsx's loader.
import fs from "node:fs";

const built = new URL("../dist/cli/drover.mjs", import.meta.url);
if (fs.existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../cli/main.ts");
}
