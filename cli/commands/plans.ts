/**
 * Plans from the command line (issue 8; REST /plans, OPERATOR_API.md "Plan"):
 *
 *   drover get plans [--state S] [-o wide|json|yaml]   the list (registered by get.ts)
 *   drover get plan ID [-o …]                          one plan as the list's row, or in full
 *   drover describe plan ID [--watch]                   state, approval, each command with its nodes
 *   drover plan approve|cancel|retry ID                 the operator's moves
 *   drover plan skip-node ID NODE --reason TEXT         move on without one node
 *   drover plan watch ID                                re-prints on change until the plan ends
 *
 * Plans are created with `drover apply -f plan.yaml` (apply.ts). Watching polls, like
 * `drover rollout status --watch`, and ends with the plan: 0 Completed, 1 any error state.
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import { isTerminalPlanState, PLAN_STATES, type PlanSummaryView, type PlanView } from "../../lib/plan-status";
import { apiFor, note, write } from "../context";
import { CliError, EXIT, type Api } from "../http";
import { formatData, formatTable } from "../output";
import { describePlan, PLAN_FORMATS, planColumns, planName, planWideColumns, summaryOf, type PlanFormat } from "../plan-output";
import { stdinIsTty, withPrompter } from "../prompt";
import { untilCtrlC, watchUntil } from "../watch";
import { fetchList, parseLimit } from "./get";

export const planOutputOption = () => new Option("-o, --output <format>", "output format").choices(PLAN_FORMATS).default("table");


/** `--command 0`: a command's index, a whole number from 0. */
function parseIndex(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a whole number from 0");
  return Number(value);
}

/** `--state completed,newplan` → `Completed,NewPlan`: state names as the server spells them, whatever the case. */
export function normalizeStates(text: string): string {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => PLAN_STATES.find((p) => p.toLowerCase() === s.toLowerCase()) ?? s)
    .join(",");
}

interface ListOptions {
  state?: string;
  limit?: number;
  all?: boolean;
  output: PlanFormat;
}

function printRows(rows: PlanSummaryView[], format: "table" | "wide"): void {
  write(formatTable(format === "wide" ? planWideColumns : planColumns, rows));
}

/** `drover get plans` and `drover get plan ID`. */
export async function getPlans(cmd: Command, id: string | undefined, opts: ListOptions): Promise<void> {
  const api = apiFor(cmd);
  if (id) {
    const plan = await api.call("get", "/plans/{id}", { path: { id } });
    if (opts.output === "json" || opts.output === "yaml") return write(formatData(plan, opts.output));
    return printRows([summaryOf(plan)], opts.output);
  }
  const query = { state: opts.state ? normalizeStates(opts.state) : undefined, limit: opts.limit ?? (opts.all ? 500 : undefined) };
  const page = await fetchList(api, "/plans", query, opts.all === true);
  if (opts.output === "json" || opts.output === "yaml") return write(formatData(page, opts.output));
  if (page.items.length === 0) return note("No plans found.");
  printRows(page.items, opts.output);
  if (page.nextCursor) note(`(${page.items.length} of ${page.total ?? "more"} shown: --all for every page)`);
}

function printPlan(plan: PlanView, format: PlanFormat): void {
  write(format === "json" || format === "yaml" ? formatData(plan, format) : describePlan(plan));
}

/** How a watch ends: 0 for Completed, 1 (with the plan's message) for any other end. */
function ending(plan: PlanView): void {
  const s = plan.status;
  if (s.state === "Completed") return;
  throw new CliError(`plan/${plan.metadata.id} ended ${s.state}${s.message ? `: ${s.message}` : ""}`, EXIT.REFUSED);
}

interface WatchOptions {
  watch?: boolean;
  interval: number;
  output: PlanFormat;
}

/**
 * Prints the plan, then (watching) polls and re-prints it whenever its status changed, until
 * it is terminal. Ctrl-C ends quietly; the server being away for a while does not.
 */
async function showPlan(cmd: Command, id: string, opts: WatchOptions): Promise<void> {
  const api = apiFor(cmd);
  await untilCtrlC(opts.watch === true, async (signal) => {
    const plan = await api.call("get", "/plans/{id}", { path: { id }, signal });
    printPlan(plan, opts.output);
    if (!opts.watch) return;
    const last = await watchUntil({
      first: plan,
      interval: opts.interval,
      signal,
      get: (s) => api.call("get", "/plans/{id}", { path: { id: plan.metadata.id }, signal: s }),
      ended: (p) => isTerminalPlanState(p.status.state),
      key: (p) => JSON.stringify(p.status),
      print: (p) => {
        if (opts.output === "table" || opts.output === "wide") write("\n");
        printPlan(p, opts.output);
      },
    });
    ending(last);
  });
}

const watchOptions = (cmd: Command) =>
  cmd.option("--interval <ms>", "poll interval when watching", parseLimit, 1000);

async function confirmCancel(api: Api, id: string, cmd: Command): Promise<void> {
  if (!stdinIsTty()) cmd.error("error: not a terminal: pass --yes to cancel without confirmation", { exitCode: EXIT.USAGE });
  // Read it first: a wrong id fails before the question, and the question says what it stops.
  const plan = await api.call("get", "/plans/{id}", { path: { id } });
  const s = plan.status;
  const what = `plan/${id} (${planName(plan.metadata.name, typeof plan.spec.id === "string" ? plan.spec.id : null)}, ${s.state}, ${s.counts.SignalCompleted}/${s.counts.total} nodes done)`;
  const answer = await withPrompter((p) => p.ask(`Cancel ${what}? Nothing more is signalled and unfinished actions are cancelled; this cannot be undone. [y/N] `));
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError("not confirmed: nothing was done", EXIT.REFUSED);
}

export function registerPlans(program: Command): void {
  const plan = program
    .command("plan")
    .description("a plan's operator moves (approve, cancel, retry) and watching it; create one with drover apply -f")
    .addHelpText(
      "after",
      `
Examples:
  drover apply -f plan.yaml --require-approval --deadline 30m
  drover get plans --state SchedulableWait,NewPlan
  drover describe plan ID
  drover plan approve ID
  drover plan watch ID
  drover plan cancel ID --reason "wrong version"
  drover plan skip-node ID dev-7 --reason "stuck Offline"
  drover plan retry ID       # a failed plan again, as a new plan skipping nodes already done`,
    );

  plan
    .command("approve")
    .description("approve a plan created with approval required: its first nodes are signalled")
    .argument("<id>", "the plan id")
    .option("--reason <text>", "why it may run (kept with your name in the approval record)")
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const p = await apiFor(cmd).call("post", "/plans/{id}/approve", { path: { id }, body: opts.reason ? { reason: opts.reason } : {} });
      write(`plan/${p.metadata.id} approved (${p.status.state})\n`);
    });

  plan
    .command("cancel")
    .description("cancel a plan: nothing more is signalled, its unfinished actions are cancelled")
    .argument("<id>", "the plan id")
    .option("--reason <text>", "why (recorded with your name in the plan's events)")
    .option("-y, --yes", "do not ask for confirmation (needed when stdin is not a terminal)")
    .action(async (id: string, opts: { reason?: string; yes?: boolean }, cmd: Command) => {
      const api = apiFor(cmd);
      if (!opts.yes) await confirmCancel(api, id, cmd);
      const p = await api.call("post", "/plans/{id}/cancel", { path: { id }, body: opts.reason ? { reason: opts.reason } : {} });
      write(p.status.state === "Cancelled" ? `plan/${p.metadata.id} cancelled\n` : `plan/${p.metadata.id}: cancel requested (${p.status.state})\n`);
    });

  plan
    .command("skip-node")
    .description("move on without one node of a running plan (waiting or signalled): it counts as done for its command, and an action it waited on is cancelled")
    .argument("<id>", "the plan id")
    .argument("<node>", "the node (device) name")
    .requiredOption("--reason <text>", "why (required; recorded with your name on the node and in the plan's events)")
    .option("--command <index>", "the command's index, when the node is in several", parseIndex)
    .action(async (id: string, node: string, opts: { reason: string; command?: number }, cmd: Command) => {
      const p = await apiFor(cmd).call("post", "/plans/{id}/nodes/{node}/skip", { path: { id, node }, body: { reason: opts.reason, ...(opts.command !== undefined ? { command: opts.command } : {}) } });
      write(`plan/${p.metadata.id}: node ${node} skipped (${p.status.state})\n`);
    });

  plan
    .command("retry")
    .description("run a failed plan again as a new plan that skips the nodes already SignalCompleted")
    .argument("<id>", "the plan that failed")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const p = await apiFor(cmd).call("post", "/plans/{id}/retry", { path: { id } });
      write(`plan/${p.metadata.id} created (${p.status.state}), retrying plan/${id}\n`);
    });

  watchOptions(
    plan
      .command("watch")
      .description("describe the plan and re-print it on every change until it ends (exit 0 Completed, 1 any error state)")
      .argument("<id>", "the plan id")
      .addOption(new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table")),
  ).action((id: string, opts: Omit<WatchOptions, "watch">, cmd: Command) => showPlan(cmd, id, { ...opts, watch: true }));

  const describe = program.command("describe").description("show one object in detail");
  watchOptions(
    describe
      .command("plan")
      .description("a plan: state, approval, then each command in order with its nodes (controllers, then workers)")
      .argument("<id>", "the plan id")
      .option("-w, --watch", "re-print on every change until the plan ends (exit 0 Completed, 1 any error state)"),
  ).action((id: string, opts: { watch?: boolean; interval: number }, cmd: Command) => showPlan(cmd, id, { ...opts, output: "table" }));
}
