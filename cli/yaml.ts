/**
 * The yaml package, loaded the first time a command reads or writes YAML (`apply -f`,
 * `-o yaml`): most commands print tables, and every invocation paid for loading it
 * (issue 20: a CLI start 0.41 → 0.2 CPU-s once zod and yaml were left out of it).
 */
import { createRequire } from "node:module";

type Yaml = typeof import("yaml");
let loaded: Yaml | undefined;

export function yaml(): Yaml {
  return (loaded ??= createRequire(import.meta.url)("yaml") as Yaml);
}
