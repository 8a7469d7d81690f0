/**
 * Where Drover's own files are (prisma/migrations, .next, dist/agent, install.sh), found the
 * same way whether this code runs from its sources (`server/paths.ts` under tsx or vitest) or
 * bundled (`dist/server/main.mjs`, `npm run build`): a path relative to this module differs
 * between the two, the package root does not.
 */
import fs from "node:fs";
import path from "node:path";

/** The nearest folder at or above `from` whose package.json is Drover's. */
export function findPackageRoot(from: string): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown };
      if (pkg.name === "drover") return dir;
    } catch {
      // No package.json here (or not JSON): look further up.
    }
    if (path.dirname(dir) === dir) throw new Error(`no package.json named "drover" at or above ${from}`);
  }
}

/** The repository (or installed package) root. */
export const ROOT = findPackageRoot(import.meta.dirname);
