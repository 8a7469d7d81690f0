/**
 * Workflows from the command line (issue 9; REST /workflows, OPERATOR_API.md "Workflow"):
 *
 *   drover get workflows [--phase P] [-o wide|json|yaml]  the list (registered by get.ts)
 *   drover get workflow NAME [-o …]                        one workflow as the list's row, or in full
 *   drover describe workflow NAME [--watch]                the run, then each step in dependency order
 *   drover workflow start|rerun|cancel|delete NAME         the operator's moves
 *   drover workflow skip-target|retry-target NAME STEP TARGET --reason TEXT   one target of a step
 *
 * Workflows are created and changed with `drover apply -f workflow.yaml [--draft]` (apply.ts). Watching
 * polls, like `describe plan --watch`, and ends with the run: 0 Succeeded, 1 Failed.
 */
import { Option, type Command } from "commander";
import { apiFor, note, write } from "../context";
import { CliError, EXIT, type Api } from "../http";
import { formatData, formatTable } from "../output";
import { stdinIsTty, withPrompter } from "../prompt";
import { untilCtrlC, watchUntil } from "../watch";
import { describeWorkflow, formatSteps, phaseCell, summaryOfWorkflow, WORKFLOW_FORMATS, workflowColumnsFor, workflowWideColumns, type WorkflowFormat, type WorkflowObject, type WorkflowSummary } from "../workflow-output";
import { fetchList, parseLimit } from "./get";

export const workflowOutputOption = () => new Option("-o, --output <format>", "output format").choices(WORKFLOW_FORMATS).default("table");

export const workflowPath = (name: string) => `/workflows/${encodeURIComponent(name)}`;

/** Written out here rather than imported: lib/workflow-status's values would load the state machine. */
const PHASES = ["Pending", "Running", "Succeeded", "Failed"];

/** `--phase running,failed` → `Running,Failed`: phases as the server spells them, whatever the case. */
export function normalizePhases(text: string): string {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => PHASES.find((p) => p.toLowerCase() === s.toLowerCase()) ?? s)
    .join(",");
}

interface ListOptions {
  phase?: string;
  limit?: number;
  all?: boolean;
  output: WorkflowFormat;
}

function printRows(rows: WorkflowSummary[], format: "table" | "wide"): void {
  write(formatTable(format === "wide" ? workflowWideColumns : workflowColumnsFor(rows), rows));
}

/** `drover get workflows` and `drover get workflow NAME`. */
export async function getWorkflows(cmd: Command, name: string | undefined, opts: ListOptions): Promise<void> {
  const api = apiFor(cmd);
  if (name) {
    const wf = await api.call("get", "/workflows/{name}", { path: { name } });
    if (opts.output === "json" || opts.output === "yaml") return write(formatData(wf, opts.output));
    return printRows([summaryOfWorkflow(wf)], opts.output);
  }
  const query = { phase: opts.phase ? normalizePhases(opts.phase) : undefined, limit: opts.limit ?? (opts.all ? 500 : undefined) };
  const page = await fetchList(api, "/workflows", query, opts.all === true);
  if (opts.output === "json" || opts.output === "yaml") return write(formatData(page, opts.output));
  if (page.items.length === 0) return note("No workflows found.");
  printRows(page.items, opts.output);
  if (page.nextCursor) note(`(${page.items.length} of ${page.total ?? "more"} shown: --all for every page)`);
}

function ending(wf: WorkflowObject): void {
  const s = wf.status;
  if (s.phase === "Succeeded") return;
  throw new CliError(`workflow/${wf.metadata.name} ended ${phaseCell(s)}${s.message ? `: ${s.message}` : ""}`, EXIT.REFUSED);
}

/**
 * Prints the workflow, then (watching) polls and re-prints it whenever its status changed,
 * until the run has ended. Ctrl-C ends quietly; the server being away for a while does not.
 */
async function showWorkflow(cmd: Command, name: string, opts: { watch?: boolean; interval: number }): Promise<void> {
  const api = apiFor(cmd);
  await untilCtrlC(opts.watch === true, async (signal) => {
    const wf = await api.call("get", "/workflows/{name}", { path: { name }, signal });
    write(describeWorkflow(wf));
    if (!opts.watch) return;
    const last = await watchUntil({
      first: wf,
      interval: opts.interval,
      signal,
      get: (s) => api.call("get", "/workflows/{name}", { path: { name }, signal: s }),
      ended: (w) => w.status.phase === "Succeeded" || w.status.phase === "Failed",
      key: (w) => JSON.stringify(w.status),
      print: (w) => write(`\n${describeWorkflow(w)}`),
    });
    ending(last);
  });
}

/** Asks on a terminal (refused off one: --yes), after reading the workflow so a wrong name fails first and the question says what it stops. */
async function confirm(api: Api, name: string, cmd: Command, verb: "Cancel" | "Delete", consequence: string): Promise<void> {
  if (!stdinIsTty()) cmd.error(`error: not a terminal: pass --yes to ${verb.toLowerCase()} without confirmation`, { exitCode: EXIT.USAGE });
  const wf = await api.call("get", "/workflows/{name}", { path: { name } });
  const sum = summaryOfWorkflow(wf);
  const what = `workflow/${name} (${phaseCell(sum)}, run ${sum.run}, ${formatSteps(sum)} steps done)`;
  const answer = await withPrompter((p) => p.ask(`${verb} ${what}? ${consequence} [y/N] `));
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError("not confirmed: nothing was done", EXIT.REFUSED);
}

export function registerWorkflows(program: Command): void {
  const workflow = program
    .command("workflow")
    .description("a workflow's operator moves (start, rerun, cancel, delete); create or change one with drover apply -f")
    .addHelpText(
      "after",
      `
Example workflow.yaml (a diamond: B and C after A, D after both):
  apiVersion: drover/v1
  kind: Workflow
  metadata: {name: upgrade-lab}
  spec:
    steps:
      A: {jobTemplate: {kind: noop, targets: {devices: [dev-1]}}}
      B: {dependencies: [A], jobTemplate: {kind: noop, targets: {selector: {matchLabels: {site: lab}}}}}
      C: {dependencies: [A], jobTemplate: {kind: noop, targets: {devices: [dev-2]}}}
      D: {dependencies: [B, C], jobTemplate: {kind: noop, targets: {devices: [dev-1]}}}

  drover apply -f workflow.yaml        # workflow/upgrade-lab created (its first run starts)
  drover apply -f workflow.yaml --draft   # or: saved, not started
  drover workflow start upgrade-lab    # a draft's first run
  drover describe workflow upgrade-lab --watch
  drover workflow rerun upgrade-lab    # a finished workflow, again from its saved spec
  drover workflow cancel upgrade-lab --reason "wrong version"
  drover workflow skip-target upgrade-lab B dev-7 --reason "in the repair shop"
  drover workflow retry-target upgrade-lab B dev-7 --reason "disk cleaned"
  drover workflow delete upgrade-lab`,
    );

  // One target of a job step (issue 21): skipped (counts as finished, not failed) or retried (a new action).
  for (const [verb, move, description] of [
    ["skip-target", "skip", "move on without one target of a running step (waiting, running or failed): it counts as finished, not failed, and its unfinished action is cancelled"],
    ["retry-target", "retry", "run one failed target of a running workflow's step again: a new action, made as the step made the first; a step that failed for it runs again"],
  ] as const) {
    workflow
      .command(verb)
      .description(description)
      .argument("<name>", "the workflow")
      .argument("<step>", "the step")
      .argument("<target>", "the target: the device's name as the step targeted it")
      .requiredOption("--reason <text>", "why (required; recorded with your name in the workflow's events)")
      .action(async (name: string, step: string, target: string, opts: { reason: string }, cmd: Command) => {
        const path = `/workflows/{name}/steps/{step}/targets/{target}/${move}` as const;
        const wf = await apiFor(cmd).call("post", path, { path: { name, step, target }, body: { reason: opts.reason } });
        const st = wf.status.statuses[step];
        write(`workflow/${name} step ${step}: target ${target} ${move === "skip" ? "skipped" : "retried"} (step ${st?.phase ?? "?"}, workflow ${wf.status.phase})\n`);
      });
  }

  workflow
    .command("start")
    .description("start a draft (saved with apply --draft) or a finished workflow: a new run from its saved spec (refused while it runs)")
    .argument("<name>", "the workflow")
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const wf = await apiFor(cmd).post<WorkflowObject>(`${workflowPath(name)}/start`);
      write(`workflow/${wf.metadata.name} started: run ${wf.status.run} ${wf.status.phase}\n`);
    });

  workflow
    .command("rerun")
    .description("start a finished workflow again from its saved spec, or a draft (a new run; refused while it runs)")
    .argument("<name>", "the workflow")
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const wf = await apiFor(cmd).post<WorkflowObject>(`${workflowPath(name)}/rerun`);
      write(`workflow/${wf.metadata.name} rerun: run ${wf.status.run} ${wf.status.phase}\n`);
    });

  workflow
    .command("cancel")
    .description("stop a running workflow: it ends Failed (Cancelled), its unfinished actions are cancelled; it is kept")
    .argument("<name>", "the workflow")
    .option("--reason <text>", "why (recorded with your name in the workflow's events)")
    .option("-y, --yes", "do not ask for confirmation (needed when stdin is not a terminal)")
    .action(async (name: string, opts: { reason?: string; yes?: boolean }, cmd: Command) => {
      const api = apiFor(cmd);
      if (!opts.yes) await confirm(api, name, cmd, "Cancel", "No new step starts and unfinished actions are cancelled.");
      const wf = await api.call("post", "/workflows/{name}/cancel", { path: { name }, body: opts.reason ? { reason: opts.reason } : {} });
      write(wf.status.phase === "Running" ? `workflow/${name}: cancel requested (Running)\n` : `workflow/${name} cancelled (${phaseCell(wf.status)})\n`);
    });

  workflow
    .command("delete")
    .description("delete a workflow and its status: its unfinished actions are cancelled; workflows it references keep running")
    .argument("<name>", "the workflow")
    .option("-y, --yes", "do not ask for confirmation (needed when stdin is not a terminal)")
    .action(async (name: string, opts: { yes?: boolean }, cmd: Command) => {
      const api = apiFor(cmd);
      if (!opts.yes) await confirm(api, name, cmd, "Delete", "Its unfinished actions are cancelled; this cannot be undone.");
      const r = await api.call("delete", "/workflows/{name}", { path: { name } });
      write(`workflow/${r.deleted} deleted${r.actionsCancelled ? ` (${r.actionsCancelled} unfinished action${r.actionsCancelled === 1 ? "" : "s"} cancelled)` : ""}\n`);
    });

  // `describe` is made by plans.ts; made here if it is not there.
  const describe = program.commands.find((c) => c.name() === "describe") ?? program.command("describe").description("show one object in detail");
  describe
    .command("workflow")
    .description("a workflow: its run, then each step in dependency order with its phase, attempts, dependencies, actions")
    .argument("<name>", "the workflow")
    .option("-w, --watch", "re-print on every change until the run ends (exit 0 Succeeded, 1 Failed)")
    .option("--interval <ms>", "poll interval when watching", parseLimit, 1000)
    .action((name: string, opts: { watch?: boolean; interval: number }, cmd: Command) => showWorkflow(cmd, name, opts));
}
