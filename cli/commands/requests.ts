/**
 * Action requests (issue 10): `drover get requests`, `drover approve request ID`, `drover reject
 * request ID`. A request is one create call, plan command or workflow step attempt; deciding it
 * moves every action of it still waiting for approval, as a unit.
 */
import type { Command } from "commander";
import { apiFor, note, outputOption, write, type Format } from "../context";
import { formatAge, formatData, formatTable, type Column } from "../output";

import type { ActionRequest } from "../types";

type RequestOrigin = NonNullable<ActionRequest["origin"]>;

/** "41/50 done, 9 waiting, 0 failed" (and running / cancelled when there are). */
export function progressText(p: ActionRequest["progress"]): string {
  const parts = [`${p.done}/${p.total} done`];
  if (p.running) parts.push(`${p.running} running`);
  parts.push(`${p.waiting} waiting${p.pendingApproval ? ` (${p.pendingApproval} for approval)` : ""}`);
  parts.push(`${p.failed} failed`);
  if (p.cancelled) parts.push(`${p.cancelled} cancelled`);
  return parts.join(", ");
}

export const requestColumns: Column<ActionRequest>[] = [
  { header: "ID", cell: (r) => r.id },
  { header: "REQUEST", cell: (r) => r.summary },
  { header: "ORIGIN", cell: (r) => r.origin },
  { header: "BY", cell: (r) => r.createdBy },
  { header: "DECISION", cell: (r) => (r.decision ? `${r.decision} by ${r.decidedBy ?? "?"}` : r.progress.pendingApproval ? "Pending" : "<none>") },
  { header: "PROGRESS", cell: (r) => progressText(r.progress) },
  { header: "AGE", cell: (r, now) => formatAge(r.createdAt, now) },
];

async function getRequests(cmd: Command, id: string | undefined, opts: { pending?: boolean; origin?: string; limit?: number; all?: boolean; output: Format }): Promise<void> {
  const api = apiFor(cmd);
  if (id) {
    const r = await api.call("get", "/requests/{id}", { path: { id } });
    if (opts.output !== "table") return write(formatData(r, opts.output));
    write(formatTable(requestColumns, [r]));
    // Why the rest wait, most first: "9 DeviceNotOnline: device d-3 is Offline: …".
    for (const w of r.progress.waitingBy ?? []) write(`  ${w.count} waiting: ${w.reason} (e.g. ${w.message})\n`);
    return;
  }
  const query = { pendingApproval: opts.pending ? true : undefined, origin: opts.origin as RequestOrigin | undefined, limit: opts.limit ?? (opts.all ? 500 : undefined) };
  let page = await api.call("get", "/requests", { query });
  if (opts.all) {
    const items = [...page.items];
    while (page.nextCursor) {
      page = await api.call("get", "/requests", { query: { ...query, cursor: page.nextCursor ?? undefined } });
      items.push(...page.items);
    }
    page = { items, total: items.length, nextCursor: null };
  }
  if (opts.output !== "table") return write(formatData(page, opts.output));
  if (page.items.length === 0) return note(`No requests found.`);
  write(formatTable(requestColumns, page.items));
  if (page.nextCursor) note(`(${page.items.length} of ${page.total ?? "more"} shown: --all for every page)`);
}

export function registerGetRequests(get: Command, parseLimit: (v: string) => number): void {
  get
    .command("requests")
    .alias("request")
    .description("action requests (one per create call, plan command or workflow step attempt), newest first, with their progress (one with ID, and why its actions wait)")
    .argument("[id]", "a request id")
    .option("--pending", "only those with actions waiting for approval")
    .option("--origin <origin>", "user, plan, workflow or rollout")
    .option("--limit <n>", "page size (server default 50)", parseLimit)
    .option("--all", "follow every page")
    .addOption(outputOption())
    .addHelpText("after", "\nExamples:\n  drover get requests --pending\n  drover get request 5d1c…")
    .action((id: string | undefined, opts: { pending?: boolean; origin?: string; limit?: number; all?: boolean; output: Format }, cmd: Command) => getRequests(cmd, id, opts));
}

const PAST = { approve: "approved", reject: "rejected" } as const;

export function registerRequestDecision(parent: Command, verb: "approve" | "reject"): void {
  parent
    .command("request")
    .alias("requests")
    .description(
      verb === "approve"
        ? "approve every action of a request still waiting for approval, as one (409 CONFLICT when none waits)"
        : "reject every action of a request still waiting for approval, as one: they end CANCELLED",
    )
    .argument("<id>", "a request id (drover get requests --pending)")
    .option("--reason <text>", "recorded with the decision")
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const answer = await apiFor(cmd).post<{ request: ActionRequest; moved: number }>(`/requests/${encodeURIComponent(id)}/${verb}`, { reason: opts.reason });
      const r = answer.request;
      write(`request/${r.id} ${PAST[verb]}: ${answer.moved} action${answer.moved === 1 ? "" : "s"} (${r.summary}); ${progressText(r.progress)}\n`);
      const untouched = r.progress.total - answer.moved;
      if (untouched > 0) note(`${untouched} of its actions had been decided already (or needed no approval) and were left as they are.`);
    });
}
