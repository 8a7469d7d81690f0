/**
 * `drover rollout`: a fleet's rollout from the command line (issue 7).
 *
 *   drover rollout pause|resume|promote|abort FLEET [--reason R]   requests the rollout
 *     controller acts on at once (POST /fleets/{name}/rollout/{kind}); prints the phase after
 *   drover rollout status FLEET [--watch]   phase, conditions, progress per stage; --watch
 *     polls (like `drover events --follow`), re-prints when something changed, and ends when
 *     the rollout does: 0 for Completed, 1 for CanaryFailed or Aborted
 */
import type { Command } from "commander";
import { apiFor, outputOption, write, type Format } from "../context";
import { CliError, EXIT, type Api } from "../http";
import { alignRows, formatData } from "../output";
import { untilCtrlC, watchUntil } from "../watch";
import { parseLimit } from "./get";
import type { Condition, Fleet } from "../types";
import type { StageProgress } from "../../lib/rollout";

/** A stage's progress, as the engine reports it (lib/rollout.ts). */
type Stage = StageProgress;

/** `status.rollout` as the server shows it (the rollout controller's Rollout row). */
export interface RolloutStatus {
  templateVersion: string;
  previousVersion: string | null;
  phase: string;
  startedAt?: string;
  canaryDevices?: string[];
  progress?: Stage[];
}

type FleetWithRollout = Omit<Fleet, "status"> & { status: Omit<Fleet["status"], "rollout"> & { rollout: RolloutStatus | null } };

const ROLLOUT_CONDITIONS = ["RolloutInProgress", "CanaryPaused", "CanaryFailed"];
/** How --watch ends on each final phase (a Superseded rollout is not shown: the fleet shows its successor). */
const ENDED: Record<string, number> = { Completed: EXIT.OK, CanaryFailed: EXIT.REFUSED, Aborted: EXIT.REFUSED, Superseded: EXIT.OK };

const PAST: Record<Kind, string> = { pause: "paused", resume: "resumed", promote: "promoted", abort: "aborted" };
const KINDS = ["pause", "resume", "promote", "abort"] as const;
type Kind = (typeof KINDS)[number];

/** The status as text: a headline, the rollout's conditions, and a table of stages. */
export function formatRolloutStatus(fleet: FleetWithRollout): string {
  const r = fleet.status.rollout;
  const name = fleet.metadata.name;
  if (!r) return `fleet/${name}: no rollout (template version ${fleet.status.templateVersion})\n`;
  const from = r.previousVersion ? ` (from ${r.previousVersion})` : "";
  const lines = [`fleet/${name}: rollout of template version ${r.templateVersion}${from}: ${r.phase}`];
  if (r.canaryDevices && r.canaryDevices.length > 0) lines.push(`canary devices: ${r.canaryDevices.join(", ")}`);
  const conditions = fleet.status.conditions.filter((c: Condition) => ROLLOUT_CONDITIONS.includes(c.type));
  if (conditions.length > 0) {
    lines.push("", ...alignRows([["CONDITION", "STATUS", "REASON", "MESSAGE"], ...conditions.map((c) => [c.type, c.status, c.reason, c.message])]).lines);
  }
  const stages = r.progress ?? [];
  if (stages.length > 0) {
    const n = (x: number | null) => (x === null ? "-" : String(x));
    lines.push(
      "",
      ...alignRows([
        ["STAGE", "STATUS", "DEVICES", "UPDATED", "UPDATING", "WAITING", "FAILED", "TIMED-OUT"],
        ...stages.map((s) =>
          s.total === null
            ? [s.name, s.status, "-", "-", "-", "-", "-", "-"]
            : [s.name, s.status, n(s.total), n(s.successful), n(s.updating), n(s.waiting), n(s.failed), n(s.timedOut)],
        ),
      ]).lines,
    );
  }
  return lines.join("\n") + "\n";
}

function printFleet(fleet: FleetWithRollout, format: Format): void {
  write(format === "table" ? formatRolloutStatus(fleet) : formatData(fleet.status, format));
}

interface StatusOptions {
  watch?: boolean;
  interval: number;
  output: Format;
}

/** The part of the fleet the rollout status shows: a change in it is printed again. */
const rolloutKey = (f: FleetWithRollout) => JSON.stringify([f.status.rollout, f.status.conditions.filter((c) => ROLLOUT_CONDITIONS.includes(c.type))]);

/** Re-prints the status on every change until the rollout ends: returns on Completed, throws (exit 1) on CanaryFailed or Aborted. */
async function watch(api: Api, name: string, first: FleetWithRollout, opts: StatusOptions, signal: AbortSignal): Promise<void> {
  const current = await watchUntil({
    first,
    interval: opts.interval,
    signal,
    get: (s) => api.call("get", "/fleets/{name}", { path: { name }, signal: s }),
    ended: (f) => f.status.rollout !== null && f.status.rollout.phase in ENDED,
    key: rolloutKey,
    print: (f) => {
      if (opts.output === "table") write("\n");
      printFleet(f, opts.output);
    },
  });
  const r = current.status.rollout;
  if (!r || ENDED[r.phase] === EXIT.OK) return;
  const why = current.status.conditions.find((c) => c.type === (r.phase === "CanaryFailed" ? "CanaryFailed" : "RolloutInProgress"))?.message;
  throw new CliError(`the rollout of template version ${r.templateVersion} ended ${r.phase}${why ? `: ${why}` : ""}`, EXIT.REFUSED);
}

export function registerRollout(program: Command): void {
  const rollout = program
    .command("rollout")
    .description("a fleet's rollout: its status, and pause / resume / promote / abort")
    .addHelpText(
      "after",
      "\nExamples:\n  drover rollout status edge-eu --watch\n  drover rollout pause edge-eu --reason 'checking the logs'\n  drover rollout promote edge-eu\n  drover rollout abort edge-eu --reason 'bad config'",
    );

  const descriptions: Record<Kind, string> = {
    pause: "pause the rollout: nothing more gets the new version until resumed",
    resume: "resume a paused rollout (resuming an auto-paused canary turns auto-pause off for the rest of it)",
    promote: "end the canary now (a manual-validation canary ends only so), or approve a suspended batch",
    abort: "abort the rollout: the fleet reverts to the previous template version",
  };
  for (const kind of KINDS) {
    const cmd = rollout.command(kind).description(descriptions[kind]).argument("<fleet>", "the fleet");
    if (kind === "pause" || kind === "abort") cmd.option("--reason <text>", "why (recorded with your name in the fleet's events)");
    cmd.addOption(outputOption()).action(async (name: string, opts: { reason?: string; output: Format }, c: Command) => {
      const api = apiFor(c);
      const fleet = await api.call("post", `/fleets/{name}/rollout/${kind}`, { path: { name }, body: opts.reason ? { reason: opts.reason } : {} });
      if (opts.output !== "table") return write(formatData(fleet, opts.output));
      const r = fleet.status.rollout;
      const reverted = kind === "abort" ? `; template version ${fleet.status.templateVersion}` : "";
      write(`fleet/${name} rollout ${PAST[kind]} (${r?.phase ?? "no rollout"})${reverted}\n`);
    });
  }

  rollout
    .command("status")
    .description("the fleet's rollout: phase, conditions and progress per stage (canary, batches)")
    .argument("<fleet>", "the fleet")
    .option("-w, --watch", "re-print on every change until the rollout ends (exit 0 Completed, 1 CanaryFailed or Aborted)")
    .option("--interval <ms>", "poll interval with --watch", parseLimit, 1000)
    .addOption(outputOption())
    .action(async (name: string, opts: StatusOptions, cmd: Command) => {
      const api = apiFor(cmd);
      await untilCtrlC(opts.watch === true, async (signal) => {
        const fleet = await api.call("get", "/fleets/{name}", { path: { name }, signal });
        printFleet(fleet, opts.output);
        if (opts.watch) await watch(api, name, fleet, opts, signal);
      });
    });
}
