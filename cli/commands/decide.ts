import { InvalidArgumentError, type Command } from "commander";
import { apiFor, note, write } from "../context";
import { EXIT } from "../http";
import { isValidLabelKey, isValidLabelValue } from "../../lib/label-selector";
import type { Enrollment } from "../types";
import { registerRequestDecision } from "./requests";

type Resource = "actions" | "enrollments";
type Verb = "approve" | "reject" | "deny" | "reopen";
/** The decisions the API has (no action is denied or reopened). */
type OnePath = "/actions/{id}/approve" | "/actions/{id}/reject" | "/enrollments/{id}/approve" | "/enrollments/{id}/deny" | "/enrollments/{id}/reopen";
type BulkPath = "/actions/approve" | "/actions/reject" | "/enrollments/approve" | "/enrollments/deny" | "/enrollments/reopen";
const PAST: Record<Verb, string> = { approve: "approved", reject: "rejected", deny: "denied", reopen: "reopened: Pending again" };

/**
 * One id → POST /{resource}/{id}/{verb}; several → the bulk route, all or nothing (one
 * already decided makes it 409 and nothing changes).
 */
async function decide(cmd: Command, resource: Resource, verb: Verb, ids: string[], reason: string | undefined, labels?: Record<string, string>): Promise<void> {
  const api = apiFor(cmd);
  const unique = [...new Set(ids)];
  const extra = labels && Object.keys(labels).length ? { labels } : {};
  const decided =
    unique.length === 1
      ? [await api.call("post", `/${resource}/{id}/${verb}` as OnePath, { path: { id: unique[0]! }, body: { reason, ...extra } })]
      : (await api.call("post", `/${resource}/${verb}` as BulkPath, { body: { ids: unique, reason, ...extra } })).items;
  for (const item of decided) {
    if ("deviceName" in item) write(`enrollment/${item.id} ${PAST[verb]} (device ${item.deviceName})\n`);
    else write(`action/${item.id} ${PAST[verb]} (${item.kind} on ${item.device}, now ${item.state})\n`);
  }
}

/** `--label k=v`, repeatable: checked here with the server's rules, so a typo is a usage error before any request. */
function collectLabel(value: string, previous: Record<string, string>): Record<string, string> {
  const at = value.indexOf("=");
  const key = at < 0 ? value : value.slice(0, at);
  const labelValue = at < 0 ? "" : value.slice(at + 1);
  if (at < 0 || !isValidLabelKey(key)) throw new InvalidArgumentError("expected key=value with a valid label key, e.g. site=lab");
  if (!isValidLabelValue(labelValue)) throw new InvalidArgumentError("invalid label value: at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric");
  return { ...previous, [key]: labelValue };
}

function decision(parent: Command, verb: Verb, resource: Resource, description: string): void {
  const noun = resource === "actions" ? "action" : "enrollment";
  const command = parent
    .command(noun)
    .alias(resource)
    .description(description)
    .argument("<ids...>", `one or more ${noun} ids (several: all or nothing)`)
    .option("--reason <text>", "recorded with the decision");
  if (verb === "approve" && resource === "enrollments") {
    command
      .option("-l, --label <key=value>", "put this label on the device, over those it asked for (repeatable)", collectLabel, {})
      .addHelpText("after", "\nExamples:\n  drover approve enrollment 5d1c… --label site=lab --label owner=ops --reason 'rack 4'");
  }
  command.action((ids: string[], opts: { reason?: string; label?: Record<string, string> }, cmd: Command) => decide(cmd, resource, verb, ids, opts.reason, opts.label));
}

export function registerDecisions(program: Command): void {
  const approve = program.command("approve").description("approve actions waiting for approval (one by one or a whole request), or enrollment requests");
  decision(approve, "approve", "actions", "approve PENDING_APPROVE actions (409 CONFLICT if already decided)");
  registerRequestDecision(approve, "approve");
  decision(approve, "approve", "enrollments", "approve Pending enrollment requests: the devices become Enrolled");

  const reject = program.command("reject").description("reject actions waiting for approval (one by one or a whole request)");
  decision(reject, "reject", "actions", "reject PENDING_APPROVE actions (they end CANCELLED)");
  registerRequestDecision(reject, "reject");

  const reopen = program.command("reopen").description("revert a denial: enrollment requests go back to Pending");
  decision(reopen, "reopen", "enrollments", "reopen Denied enrollment requests (Pending again; the agent keeps its request and finds it so within 5 minutes)");

  const deny = program.command("deny").description("deny enrollment requests");
  deny
    .command("enrollment")
    .alias("enrollments")
    .description("deny Pending enrollment requests: by id, or every Pending one (--all-pending), e.g. to clear a flood")
    .argument("[ids...]", "one or more enrollment ids (several: all or nothing)")
    .option("--all-pending", "deny every request Pending now")
    .option("--address <address>", "with --all-pending: only those sent from this client address")
    .option("--reason <text>", "recorded with the decision")
    .addHelpText(
      "after",
      "\nExamples:\n  drover deny enrollment 5d1c… --reason 'unknown hardware'\n  drover deny enrollments --all-pending --address 203.0.113.7 --reason flood",
    )
    .action(async (ids: string[], opts: { allPending?: boolean; address?: string; reason?: string }, cmd: Command) => {
      if (opts.allPending && ids.length) cmd.error("error: give enrollment ids or --all-pending, not both", { exitCode: EXIT.USAGE });
      if (!opts.allPending && !ids.length) cmd.error("error: give enrollment ids, or --all-pending to deny every Pending request", { exitCode: EXIT.USAGE });
      if (opts.address !== undefined && !opts.allPending) cmd.error("error: --address needs --all-pending", { exitCode: EXIT.USAGE });
      if (!opts.allPending) return decide(cmd, "enrollments", "deny", ids, opts.reason);
      const body = { allPending: true, clientAddress: opts.address, reason: opts.reason };
      const answer = await apiFor(cmd).post<{ count: number; items: Enrollment[] }>("/enrollments/deny", body);
      for (const item of answer.items) write(`enrollment/${item.id} denied (device ${item.deviceName})\n`);
      note(`${answer.count} pending enrollment request${answer.count === 1 ? "" : "s"}${opts.address ? ` from ${opts.address}` : ""} denied.`);
    });
}
