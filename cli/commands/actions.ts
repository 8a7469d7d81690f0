import { InvalidArgumentError, Option, type Command } from "commander";
import { apiFor, outputOption, write, type Format } from "../context";
import { EXIT } from "../http";
import { actionColumns, formatData, formatTable } from "../output";
import type { Action } from "../types";
import { parseDuration } from "../../lib/duration";
import { DEFAULT_HEALTH_POLICY, HEALTH_POLICIES, type HealthPolicy } from "../../lib/health-policy";

function parseExpiry(value: string): number {
  try {
    return Math.max(1, Math.round(parseDuration(value) / 1000));
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function parseArgs(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError("not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError("expected a JSON object");
  return parsed as Record<string, unknown>;
}

interface CreateOptions {
  device?: string;
  selector?: string;
  kind: string;
  args?: Record<string, unknown>;
  requireApproval?: boolean;
  expiresIn?: number;
  healthPolicy?: HealthPolicy;
  output: Format;
}

export function registerActions(program: Command): void {
  program
    .command("create")
    .description("create actions")
    .command("action")
    .alias("actions")
    .description("create an action for one device, or for every Enrolled device a label selector matches")
    .option("--device <name>", "the device")
    .option("-l, --selector <selector>", "every Enrolled device matching this label selector")
    .requiredOption("--kind <kind>", "the action kind, e.g. exec or reboot")
    .option("--args <json>", "arguments as a JSON object", parseArgs)
    .option("--require-approval", "wait for an operator's approval before running")
    .option("--expires-in <duration>", "cancel it if it has not started within this long (30s, 10m, 24h)", parseExpiry)
    .addOption(
      new Option("--health-policy <summary>", "the least healthy device it goes to: Online (only Online), Degraded (Online or Degraded) or Error (those and Error)")
        .choices(HEALTH_POLICIES)
        .default(DEFAULT_HEALTH_POLICY),
    )
    .addOption(outputOption())
    .addHelpText(
      "after",
      `\nExamples:\n  drover create action --device edge-1 --kind exec --args '{"command":"uptime"}'\n  drover create action -l site=lab --kind reboot --require-approval --health-policy Online`,
    )
    .action(async (opts: CreateOptions, cmd: Command) => {
      if ((opts.device === undefined) === (opts.selector === undefined)) {
        cmd.error("error: give either --device or -l/--selector", { exitCode: EXIT.USAGE });
      }
      const created = await apiFor(cmd).post<{ items: Action[] }>("/actions", {
        ...(opts.device !== undefined ? { device: opts.device } : { labelSelector: opts.selector }),
        kind: opts.kind,
        args: opts.args ?? {},
        ...(opts.requireApproval ? { requireApproval: true } : {}),
        ...(opts.expiresIn ? { expiresInSeconds: opts.expiresIn } : {}),
        ...(opts.healthPolicy && opts.healthPolicy !== DEFAULT_HEALTH_POLICY ? { healthPolicy: opts.healthPolicy } : {}),
      });
      write(opts.output === "table" ? formatTable(actionColumns, created.items) : formatData(created, opts.output));
    });

  program
    .command("rerun")
    .description("run ended actions again")
    .command("action")
    .description("run an ended action (DONE, FAILED, CANCELLED, LOST) again: a new action with the same device, kind, args and approval requirement")
    .argument("<id>", "the action id")
    .addOption(outputOption())
    .addHelpText("after", `\nThe new action follows the rules of any new one: it may wait for approval, and is refused (409) while the\naction has not ended or when its device is no longer Enrolled.\n\nExample:\n  drover rerun action 3f2b…`)
    .action(async (id: string, opts: { output: Format }, cmd: Command) => {
      const created = await apiFor(cmd).post<Action & { rerunOf: string }>(`/actions/${encodeURIComponent(id)}/rerun`, {});
      write(opts.output === "table" ? `action/${created.id} created (${created.state}), a rerun of action/${id}\n` : formatData(created, opts.output));
    });

  program
    .command("cancel")
    .description("cancel actions")
    .command("action")
    .description("cancel an action: a pending one at once, a NEW or RUNNING one through its agent")
    .argument("<id>", "the action id")
    .option("--reason <text>", "recorded with the cancellation")
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const action = await apiFor(cmd).post<Action>(`/actions/${encodeURIComponent(id)}/cancel`, { reason: opts.reason });
      write(
        action.state === "CANCELLED"
          ? `action/${action.id} cancelled\n`
          : `action/${action.id} is ${action.state}: cancel requested, the agent is told in its long-poll\n`,
      );
    });
}
