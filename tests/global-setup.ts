/**
 * Once per `vitest run`, before any test file: the `drover` CLI built as it ships
 * (scripts/build-cli.mjs), so the CLI's tests start `node` on one file instead of tsx
 * transpiling the sources at each of their ~230 invocations. Test files find it with
 * `inject("cliBundle")`.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";

const ROOT = path.resolve(import.meta.dirname, "..");

declare module "vitest" {
  export interface ProvidedContext {
    /** The built CLI (drover.mjs), inside the repository so its npm packages resolve. */
    cliBundle: string;
  }
}

export default function setup(project: TestProject): () => void {
  fs.mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, ".tmp", "test-build-"));
  execFileSync(process.execPath, [path.join(ROOT, "scripts", "build-cli.mjs"), "--out", dir], { cwd: ROOT, stdio: "inherit" });
  project.provide("cliBundle", path.join(dir, "drover.mjs"));
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
