/**
 * `drover apply -f fleet.yaml`: create or update objects from a file, like kubectl apply.
 * JSON or YAML (several `---` documents allowed; `-` reads stdin). Each fleet prints
 * `fleet/NAME created`, `configured` or `unchanged` (the server's metadata.generation did not
 * move). A Plan (`kind: Plan`, k0s's or Drover's apiVersion) is always a new plan: its
 * document's own text is POSTed as YAML, so the server's messages name the file's lines, and
 * it prints `plan/ID created (STATE)`. A Workflow is saved by name like a fleet (POST, or PUT
 * when it exists: `workflow/NAME created | configured | unchanged`); creating one starts its
 * first run (`--draft` saves it without starting: `drover workflow start NAME` runs it). The server validates (and refuses, 409, an edit of a step that has started):
 * its message is printed as is.
 */
import fs from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import { yaml } from "../yaml";
import { apiFor, note, write } from "../context";
import { readAllStdin } from "../prompt";
import { ApiError, CliError, EXIT, type Api, type Query } from "../http";

function readSource(file: string): Promise<string> | string {
  if (file === "-") return readAllStdin();
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file}: ${code === "ENOENT" ? "no such file" : ((error as Error).message ?? code)}`, EXIT.USAGE);
  }
}

/** An object of the file, and its document's text (see documentText). */
export interface SourceObject {
  object: Record<string, unknown>;
  text: string;
}

/**
 * The objects in a file: one JSON value, or every YAML document (JSON is YAML too), each
 * with its own text.
 */
export function parseObjects(text: string, source: string): SourceObject[] {
  const docs = yaml().parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  const objects: SourceObject[] = [];
  list.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error) throw new CliError(`${source}: not valid YAML or JSON (document ${i + 1}): ${error.message.split("\n")[0]}`, EXIT.USAGE);
    const value = doc.toJS({ maxAliasCount: 50 }) as unknown;
    if (value === null || value === undefined) return; // an empty document (e.g. a trailing ---)
    if (typeof value !== "object" || Array.isArray(value)) throw new CliError(`${source}: document ${i + 1} is not an object`, EXIT.USAGE);
    objects.push({ object: value as Record<string, unknown>, text: list.length === 1 ? text : documentText(text, doc.range) });
  });
  if (objects.length === 0) throw new CliError(`${source}: no objects to apply`, EXIT.USAGE);
  return objects;
}

/**
 * One document of several, as a text the server reads as that one document, on the same
 * lines as in the file: the lines before it become empty lines, so a server message naming
 * line 14 still means the file's line 14.
 */
export function documentText(text: string, range: [number, number, number]): string {
  const before = text.slice(0, range[0]);
  return "\n".repeat(before.split("\n").length - 1) + text.slice(range[0], range[2]);
}

function parseDeadline(value: string): string {
  if (!/^\d+(ms|s|m|h)$/.test(value)) throw new InvalidArgumentError('expected a duration such as "30s", "10m" or "24h"');
  return value;
}

async function applyPlan(api: Api, text: string, query: Query): Promise<string> {
  const plan = await api.call("post", "/plans", { raw: { text, contentType: "application/yaml" }, query });
  return `plan/${plan.metadata.id} created (${plan.status.state})`;
}

/** An object saved by name (a fleet, a workflow): POST when new, else PUT, and whether the server's generation moved. */
async function applyNamed(api: Api, collection: "/fleets" | "/workflows", object: Record<string, unknown>, name: string, createQuery?: Query): Promise<"created" | "configured" | "unchanged"> {
  const one = collection === "/fleets" ? "/fleets/{name}" : "/workflows/{name}";
  // A parsed YAML document: the server validates it (strict, naming the field).
  const body = object as never;
  let existing: { metadata: { generation: number } } | null = null;
  try {
    existing = await api.call("get", one, { path: { name } });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  if (!existing) {
    await api.call("post", collection, { body, query: createQuery });
    return "created";
  }
  const updated = await api.call("put", one, { path: { name }, body });
  return updated.metadata.generation === existing.metadata.generation ? "unchanged" : "configured";
}

export function registerApply(program: Command): void {
  program
    .command("apply")
    .description("create or update fleets and workflows, or create plans, from a JSON or YAML file, like kubectl apply")
    .requiredOption("-f, --filename <file>", "the file ('-' for stdin); YAML may hold several documents separated by ---")
    .option("--require-approval", "plans: wait for an operator's approval (drover plan approve) before any node is signalled")
    .option("--deadline <duration>", "plans: end DeadlineExceeded if not completed this long after creation, e.g. 30m", parseDeadline)
    .option("--draft", "workflows: a new workflow is saved without starting a run (drover workflow start NAME runs it)")
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
  drover get fleet edge-eu -o yaml > fleet.yaml   # edit, then apply it again

A plan (k0s's apiVersion autopilot.k0sproject.io/v1beta2, or drover/v1) is created each time:
  drover apply -f plan.yaml --require-approval --deadline 30m   # plan/ID created (SchedulableWait)
  drover describe plan ID --watch

A workflow (kind: Workflow, see drover workflow --help) is saved by name; creating it starts it:
  drover apply -f workflow.yaml   # workflow/NAME created, then configured or unchanged
  drover apply -f workflow.yaml --draft   # saved, not started: drover workflow start NAME`,
    )
    .action(async (opts: { filename: string; requireApproval?: boolean; deadline?: string; draft?: boolean }, cmd: Command) => {
      const source = opts.filename === "-" ? "stdin" : opts.filename;
      const objects = parseObjects(await readSource(opts.filename), source);
      const planQuery: Query = { requireApproval: opts.requireApproval ? true : undefined, deadline: opts.deadline };
      if ((opts.requireApproval || opts.deadline) && !objects.some(({ object }) => object.kind === "Plan")) {
        throw new CliError(`--require-approval and --deadline are for plans: ${source} has no kind: Plan`, EXIT.USAGE);
      }
      const api = apiFor(cmd);
      let failed = 0;
      for (const [i, { object, text }] of objects.entries()) {
        const kind = object.kind ?? "Fleet";
        const name = (object.metadata as { name?: unknown } | undefined)?.name;
        const named = typeof name === "string" && name !== "";
        const what = (kind === "Fleet" || kind === "Workflow") && named ? `${String(kind).toLowerCase()}/${name}` : kind === "Plan" && named ? `document ${i + 1} (plan ${name})` : `document ${i + 1}`;
        try {
          if (kind === "Plan") {
            write(`${await applyPlan(api, text, planQuery)}\n`);
            continue;
          }
          if (kind !== "Fleet" && kind !== "Workflow") throw new CliError(`kind ${JSON.stringify(kind)} cannot be applied: only Fleet, Plan and Workflow objects`, EXIT.REFUSED);
          if (typeof name !== "string" || name === "") throw new CliError(`metadata.name: a ${String(kind).toLowerCase()} needs a name`, EXIT.REFUSED);
          const outcome = kind === "Fleet" ? await applyNamed(api, "/fleets", object, name) : await applyNamed(api, "/workflows", object, name, opts.draft ? { start: false } : undefined);
          write(`${what} ${outcome}${kind === "Workflow" && opts.draft && outcome === "created" ? " (draft, not started)" : ""}\n`);
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
