import { InvalidArgumentError, type Command } from "commander";
import { apiFor, note, outputOption, write, type Format } from "../context";
import { CliError, EXIT, type Answer, type Api, type Query } from "../http";
import { actionColumns, deviceColumns, enrollmentColumns, fleetColumns, formatData, formatTable, tokenColumns, type Column } from "../output";
import type { ApiToken, Page } from "../types";
import { getPlans, planOutputOption } from "./plans";
import type { PlanFormat } from "../plan-output";
import { getWorkflows, workflowOutputOption } from "./workflows";
import type { WorkflowFormat } from "../workflow-output";
import { registerGetRequests } from "./requests";

interface ListOptions {
  output: Format;
  selector?: string;
  limit?: number;
  all?: boolean;
}

export function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

/** The lists answered a page at a time ({items, total, nextCursor}). */
type PagedPath = "/devices" | "/actions" | "/plans" | "/workflows";

/** GET a paged list; with `all`, follows nextCursor to the end (pages of 500 unless --limit). */
export async function fetchList<P extends PagedPath>(api: Api, path: P, query: Query, all: boolean): Promise<Answer<P>> {
  // The query is the command's own flags (checked by commander; the server refuses a bad value, naming it).
  const get = api.call.bind(api) as (method: "get", path: PagedPath, options: { query: Query }) => Promise<{ items: unknown[]; total: number; nextCursor: string | null }>;
  const fetchPage = (q: Query) => get("get", path, { query: q });
  let page = await fetchPage(query);
  if (!all) return page as Answer<P>;
  const items = [...page.items];
  while (page.nextCursor) {
    const cursor = page.nextCursor;
    page = await fetchPage({ ...query, cursor });
    items.push(...page.items);
    if (page.nextCursor === cursor) break;
  }
  return { ...page, items, total: page.total ?? items.length, nextCursor: null } as Answer<P>;
}

/** Prints one object or a list in the chosen format; an empty table says so on stderr. */
function show<T>(format: Format, data: unknown, rows: T[], columns: Column<T>[], what: string): void {
  if (format !== "table") return write(formatData(data, format));
  if (rows.length === 0) return note(`No ${what} found.`);
  write(formatTable(columns, rows));
}

function morePages(page: Page<unknown>, format: Format): void {
  if (format === "table" && page.nextCursor) {
    note(`(${page.items.length} of ${page.total ?? "more"} shown: --all for every page)`);
  }
}

export function registerGet(program: Command): void {
  const get = program
    .command("get")
    .description("list or show devices, fleets, plans, workflows, actions, action requests, enrollment requests and API tokens")
    .addHelpText(
      "after",
      "\nExamples:\n  drover get devices -l site=lab\n  drover get devices --fleet edge-eu\n  drover get fleet edge-eu -o yaml\n  drover get plans --state SchedulableWait -o wide\n  drover get workflows --phase Running,Failed\n  drover get actions --state PENDING_APPROVE -o yaml\n  drover get enrollments --status Pending --address 203.0.113.7\n  drover get tokens",
    );

  get
    .command("devices")
    .aliases(["device", "dev"])
    .description("devices with their derived statuses (one device in full with NAME)")
    .argument("[name]", "a device name")
    .option("-l, --selector <selector>", "label selector, e.g. 'site=lab,env in (dev,test)'")
    .option("--fleet <name>", "only the members of this fleet")
    .option("--limit <n>", "page size (server default 50)", parseLimit)
    .option("--all", "follow every page")
    .addOption(outputOption())
    .action(async (name: string | undefined, opts: ListOptions & { fleet?: string }, cmd: Command) => {
      const api = apiFor(cmd);
      if (name) {
        const device = await api.call("get", "/devices/{name}", { path: { name } });
        return show(opts.output, device, [device], deviceColumns, "devices");
      }
      const query = { labelSelector: opts.selector, fleet: opts.fleet, limit: opts.limit ?? (opts.all ? 500 : undefined) };
      const page = await fetchList(api, "/devices", query, opts.all === true);
      show(opts.output, page, page.items, deviceColumns, "devices");
      morePages(page, opts.output);
    });

  get
    .command("fleets")
    .alias("fleet")
    .description("fleets with their template version and how many members run it (one fleet in full with NAME)")
    .argument("[name]", "a fleet name")
    .addOption(outputOption())
    .action(async (name: string | undefined, opts: { output: Format }, cmd: Command) => {
      const api = apiFor(cmd);
      if (name) {
        const fleet = await api.call("get", "/fleets/{name}", { path: { name } });
        return show(opts.output, fleet, [fleet], fleetColumns, "fleets");
      }
      const list = await api.call("get", "/fleets");
      show(opts.output, list, list.items, fleetColumns, "fleets");
    });

  get
    .command("plans")
    .alias("plan")
    .description("plans, newest first: state, each command's state, nodes done (one plan with ID; in full with -o yaml or drover describe plan)")
    .argument("[id]", "a plan id")
    .option("--state <states>", "only these states, comma-separated (e.g. NewPlan,SchedulableWait)")
    .option("--limit <n>", "page size (server default 50)", parseLimit)
    .option("--all", "follow every page")
    .addOption(planOutputOption())
    .action((id: string | undefined, opts: { state?: string; limit?: number; all?: boolean; output: PlanFormat }, cmd: Command) => getPlans(cmd, id, opts));

  get
    .command("workflows")
    .alias("workflow")
    .description("workflows by name: phase, steps done (Succeeded or Skipped) of all, failed steps, run (one workflow with NAME; in full with -o yaml or drover describe workflow)")
    .argument("[name]", "a workflow name")
    .option("--phase <phases>", "only these phases, comma-separated (Pending, Running, Succeeded, Failed)")
    .option("--limit <n>", "page size (server default 100)", parseLimit)
    .option("--all", "follow every page")
    .addOption(workflowOutputOption())
    .action((name: string | undefined, opts: { phase?: string; limit?: number; all?: boolean; output: WorkflowFormat }, cmd: Command) => getWorkflows(cmd, name, opts));

  get
    .command("actions")
    .alias("action")
    .description("actions, newest first (one action with its output with ID)")
    .argument("[id]", "an action id")
    .option("-l, --selector <selector>", "only actions of devices matching this label selector")
    .option("--device <name>", "only this device's actions")
    .option("--state <states>", "only these states, comma-separated (e.g. PENDING_APPROVE,RUNNING)")
    .option("--limit <n>", "page size (server default 50)", parseLimit)
    .option("--all", "follow every page")
    .addOption(outputOption())
    .action(async (id: string | undefined, opts: ListOptions & { device?: string; state?: string }, cmd: Command) => {
      const api = apiFor(cmd);
      if (id) {
        const action = await api.call("get", "/actions/{id}", { path: { id } });
        return show(opts.output, action, [action], actionColumns, "actions");
      }
      const query = {
        labelSelector: opts.selector,
        device: opts.device,
        state: opts.state?.toUpperCase(),
        limit: opts.limit ?? (opts.all ? 500 : undefined),
      };
      const page = await fetchList(api, "/actions", query, opts.all === true);
      show(opts.output, page, page.items, actionColumns, "actions");
      morePages(page, opts.output);
    });

  registerGetRequests(get, parseLimit);

  get
    .command("enrollments")
    .alias("enrollment")
    .description("enrollment requests, newest first (one by id or device name with NAME_OR_ID)")
    .argument("[name-or-id]", "an enrollment id or a device name")
    .option("--status <status>", "Pending, Approved or Denied")
    .option("--address <address>", "only requests sent from this client address")
    .option("--limit <n>", "at most this many (server default 200, max 1000)", parseLimit)
    .option("--all", "as many as the server gives (1000)")
    .addOption(outputOption())
    .action(async (nameOrId: string | undefined, opts: ListOptions & { status?: string; address?: string }, cmd: Command) => {
      const api = apiFor(cmd);
      const limit = nameOrId || opts.all ? 1000 : opts.limit;
      const page = await api.call("get", "/enrollments", { query: { status: opts.status as never, clientAddress: opts.address, limit } });
      if (!nameOrId) return show(opts.output, page, page.items, enrollmentColumns, "enrollment requests");
      const found = page.items.filter((e) => e.id === nameOrId || e.deviceName === nameOrId);
      if (found.length === 0) throw new CliError(`NOT_FOUND: enrollment request "${nameOrId}" not found`, EXIT.REFUSED);
      show(opts.output, found.length === 1 ? found[0] : { items: found }, found, enrollmentColumns, "enrollment requests");
    });

  get
    .command("tokens")
    .alias("token")
    .description("API tokens, newest first: your own, or everyone's for an admin (* marks the one in use)")
    .option("--user <username>", "only this user's tokens (admins)")
    .option("--limit <n>", "at most this many (server default 200, max 1000)", parseLimit)
    .addOption(outputOption())
    .action(async (opts: ListOptions & { user?: string }, cmd: Command) => {
      const page = await apiFor(cmd).get<Page<ApiToken>>("/tokens", { username: opts.user, limit: opts.limit });
      show(opts.output, page, page.items, tokenColumns, "API tokens");
    });
}
