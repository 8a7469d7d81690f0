import type { Command } from "commander";
import { apiFor, write } from "../context";
import type { Action, Enrollment } from "../types";

type Resource = "actions" | "enrollments";
type Verb = "approve" | "reject" | "deny";
const PAST: Record<Verb, string> = { approve: "approved", reject: "rejected", deny: "denied" };

/**
 * One id → POST /{resource}/{id}/{verb}; several → the bulk route, all or nothing (one
 * already decided makes it 409 and nothing changes).
 */
async function decide(cmd: Command, resource: Resource, verb: Verb, ids: string[], reason: string | undefined): Promise<void> {
  const api = apiFor(cmd);
  const unique = [...new Set(ids)];
  const decided =
    unique.length === 1
      ? [await api.post<Action | Enrollment>(`/${resource}/${encodeURIComponent(unique[0]!)}/${verb}`, { reason })]
      : (await api.post<{ items: (Action | Enrollment)[] }>(`/${resource}/${verb}`, { ids: unique, reason })).items;
  for (const item of decided) {
    if ("deviceName" in item) write(`enrollment/${item.id} ${PAST[verb]} (device ${item.deviceName})\n`);
    else write(`action/${item.id} ${PAST[verb]} (${item.kind} on ${item.device}, now ${item.state})\n`);
  }
}

function decision(parent: Command, verb: Verb, resource: Resource, description: string): void {
  const noun = resource === "actions" ? "action" : "enrollment";
  parent
    .command(noun)
    .alias(resource)
    .description(description)
    .argument("<ids...>", `one or more ${noun} ids (several: all or nothing)`)
    .option("--reason <text>", "recorded with the decision")
    .action((ids: string[], opts: { reason?: string }, cmd: Command) => decide(cmd, resource, verb, ids, opts.reason));
}

export function registerDecisions(program: Command): void {
  const approve = program.command("approve").description("approve actions waiting for approval, or enrollment requests");
  decision(approve, "approve", "actions", "approve PENDING_APPROVE actions (409 CONFLICT if already decided)");
  decision(approve, "approve", "enrollments", "approve Pending enrollment requests: the devices become Enrolled");

  const reject = program.command("reject").description("reject actions waiting for approval");
  decision(reject, "reject", "actions", "reject PENDING_APPROVE actions (they end CANCELLED)");

  const deny = program.command("deny").description("deny enrollment requests");
  decision(deny, "deny", "enrollments", "deny Pending enrollment requests");
}
