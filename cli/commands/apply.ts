/**
 * `drover apply -f fleet.yaml`: create or update objects from a file, like kubectl apply.
 * JSON or YAML (several `---` documents allowed; `-` reads stdin). Each object prints
 * `fleet/NAME created`, `configured` or `unchanged` (the server's metadata.generation did not
 * move). The server validates: its message, naming the field, is printed as is.
 */
import fs from "node:fs";
import type { Command } from "commander";
import YAML from "yaml";
import { apiFor, note, write } from "../context";
import { ApiError, CliError, EXIT, type Api } from "../http";
import type { Fleet } from "../types";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function readSource(file: string): Promise<string> | string {
  if (file === "-") return readStdin();
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file}: ${code === "ENOENT" ? "no such file" : ((error as Error).message ?? code)}`, EXIT.USAGE);
  }
}

/** The objects in a file: one JSON value, or every YAML document (JSON is YAML too). */
export function parseObjects(text: string, source: string): Record<string, unknown>[] {
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  const objects: Record<string, unknown>[] = [];
  list.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error) throw new CliError(`${source}: not valid YAML or JSON (document ${i + 1}): ${error.message.split("\n")[0]}`, EXIT.USAGE);
    const value = doc.toJS({ maxAliasCount: 50 }) as unknown;
    if (value === null || value === undefined) return; // an empty document (e.g. a trailing ---)
    if (typeof value !== "object" || Array.isArray(value)) throw new CliError(`${source}: document ${i + 1} is not an object`, EXIT.USAGE);
    objects.push(value as Record<string, unknown>);
  });
  if (objects.length === 0) throw new CliError(`${source}: no objects to apply`, EXIT.USAGE);
  return objects;
}

async function applyFleet(api: Api, object: Record<string, unknown>, name: string): Promise<"created" | "configured" | "unchanged"> {
  const path = `/fleets/${encodeURIComponent(name)}`;
  let existing: Fleet | null = null;
  try {
    existing = await api.get<Fleet>(path);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  if (!existing) {
    await api.post<Fleet>("/fleets", object);
    return "created";
  }
  const updated = await api.put<Fleet>(path, object);
  return updated.metadata.generation === existing.metadata.generation ? "unchanged" : "configured";
}

export function registerApply(program: Command): void {
  program
    .command("apply")
    .description("create or update objects (fleets) from a JSON or YAML file, like kubectl apply")
    .requiredOption("-f, --filename <file>", "the file ('-' for stdin); YAML may hold several documents separated by ---")
    .addHelpText(
      "after",
      `
Example fleet.yaml:
  metadata: {name: edge-eu}
  spec:
    selector: {matchLabels: {site: eu}}
    template:
      spec:
        version: "2.1.0"
        applications: [{name: web, command: ["/usr/bin/web", "--port", "8080"]}]

  drover apply -f fleet.yaml
  drover get fleet edge-eu -o yaml > fleet.yaml   # edit, then apply it again`,
    )
    .action(async (opts: { filename: string }, cmd: Command) => {
      const source = opts.filename === "-" ? "stdin" : opts.filename;
      const objects = parseObjects(await readSource(opts.filename), source);
      const api = apiFor(cmd);
      let failed = 0;
      for (const [i, object] of objects.entries()) {
        const kind = object.kind ?? "Fleet";
        const name = (object.metadata as { name?: unknown } | undefined)?.name;
        const what = typeof name === "string" ? `fleet/${name}` : `document ${i + 1}`;
        try {
          if (kind !== "Fleet") throw new CliError(`kind ${JSON.stringify(kind)} cannot be applied: only Fleet objects`, EXIT.REFUSED);
          if (typeof name !== "string" || name === "") throw new CliError("metadata.name: a fleet needs a name", EXIT.REFUSED);
          write(`${what} ${await applyFleet(api, object, name)}\n`);
        } catch (error) {
          // Like kubectl: report it and go on with the other objects; exit non-zero at the end.
          if (!(error instanceof CliError) || error.exitCode === EXIT.UNREACHABLE || error.exitCode === EXIT.AUTH) throw error;
          failed++;
          note(`error: ${what}: ${error.message}`);
        }
      }
      if (failed > 0) throw new CliError(`${failed} of ${objects.length} object${objects.length === 1 ? "" : "s"} not applied`, EXIT.REFUSED);
    });
}
