"use client";

import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link } from "@/components/ui/link";
import type { OutputGroup, OutputGroupsView } from "@/server/actions/output-groups";
import { GROUP_OUTPUT_SHOWN } from "@/lib/output-groups";
import { errorMessage, useTRPC } from "../trpc";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone } from "../status/tones";
import { Button } from "../ui/button";
import { TextFilter } from "../ui/text-filter";
import { cx } from "../ui/cx";
import { actionsHref } from "./params";

/** Groups asked for at first, and added by each "More groups" (the server gives at most 200 a page). */
const GROUPS_PAGE = 50;
const GROUPS_MAX = 200;
/** An output past this many lines (or characters) opens collapsed. */
const COLLAPSED_LINES = 8;
const COLLAPSED_CHARS = 800;

/** Whose actions: a request's, or a workflow step's current attempt's targets'. */
export type OutputsSource = { request: string } | { workflow: string; step: string };

/**
 * The outputs of many actions together (issue 21): groups of identical (state, error, output),
 * largest first, each "N devices: STATE", its output, and its devices linking to their actions.
 * The search is the server's (over every action of the source, not only the groups loaded), so
 * it finds a device or an output past the groups shown. Live: the queries are invalidated with
 * the request's (or the workflow's) when their actions move (components/live).
 */
export function OutputGroups({ source, compact = false }: { source: OutputsSource; compact?: boolean }) {
  const trpc = useTRPC();
  const [search, setSearch] = useState("");
  const [limit, setLimit] = useState(GROUPS_PAGE);
  const page = { limit, search: search || undefined };
  const byRequest = "request" in source;
  const request = useQuery({
    ...trpc.requests.outputs.queryOptions({ id: byRequest ? source.request : "", ...page }),
    enabled: byRequest,
    placeholderData: keepPreviousData,
  });
  const step = useQuery({
    ...trpc.workflows.targetOutputs.queryOptions(byRequest ? { name: "-", step: "-", ...page } : { name: source.workflow, step: source.step, ...page }),
    enabled: !byRequest,
    placeholderData: keepPreviousData,
  });
  const q = byRequest ? request : step;
  const data: OutputGroupsView | undefined = q.data;
  const more = byRequest ? actionsHref({ request: source.request }) : null;

  return (
    <div className={compact ? "space-y-2" : "space-y-3 px-4 py-3"} data-testid="output-groups">
      <div className="flex flex-wrap items-center gap-2">
        <TextFilter
          id={byRequest ? `outputs-search-${source.request}` : `outputs-search-${source.workflow}-${source.step}`}
          label="Search outputs and devices"
          placeholder="Search output or device"
          value={search}
          onApply={(t) => {
            setSearch(t);
            setLimit(GROUPS_PAGE);
          }}
          maxLength={200}
          testId="outputs-search"
          className={compact ? "w-full" : "w-64"}
        />
        {data && (
          <span className="text-xs text-slate-500" data-testid="outputs-summary">
            {data.groups.toLocaleString("en-US")} distinct output{data.groups === 1 ? "" : "s"} over {data.actions.toLocaleString("en-US")} action
            {data.actions === 1 ? "" : "s"}
            {search && " matching"}
          </span>
        )}
      </div>
      {q.isPending ? (
        <p className="text-sm text-slate-500">Loading outputs…</p>
      ) : q.isError ? (
        <p className="text-sm text-red-700" role="alert">
          {errorMessage(q.error)}
        </p>
      ) : data && data.items.length === 0 ? (
        <p className="text-sm text-slate-500" data-testid="outputs-empty">
          {search ? `No action's output or device matches “${search}”.` : "No actions yet."}
        </p>
      ) : (
        data && (
          <>
            <ul className="space-y-2">
              {data.items.map((g) => (
                <Group key={`${g.state}\u0000${g.error ?? ""}\u0000${g.output}`} group={g} allHref={more} compact={compact} />
              ))}
            </ul>
            {data.nextOffset !== null &&
              (limit < GROUPS_MAX ? (
                <Button variant="secondary" size="sm" onClick={() => setLimit((l) => Math.min(GROUPS_MAX, l + GROUPS_PAGE))} data-testid="outputs-more">
                  More groups ({(data.groups - data.items.length).toLocaleString("en-US")} not shown)
                </Button>
              ) : (
                <p className="text-xs text-slate-500">
                  The {data.items.length} largest of {data.groups.toLocaleString("en-US")} groups shown: search to find the others.
                </p>
              ))}
          </>
        )
      )}
    </div>
  );
}

function Group({ group: g, allHref, compact }: { group: OutputGroup; allHref: string | null; compact: boolean }) {
  const long = g.output.length > COLLAPSED_CHARS || g.output.split("\n").length > COLLAPSED_LINES;
  const [open, setOpen] = useState(false);
  const rest = g.count - g.devices.length;
  return (
    <li className="rounded-md border border-slate-200" data-testid="output-group" data-state={g.state} data-count={g.count}>
      <div className="flex flex-wrap items-center gap-2 border-b border-slate-100 px-3 py-1.5 text-sm">
        <span className="font-medium text-slate-900" data-testid="output-group-title">
          {g.count.toLocaleString("en-US")} device{g.count === 1 ? "" : "s"}:
        </span>
        <StatusBadge table={actionStateTone} state={g.state} />
        {g.error && (
          <span className="min-w-0 break-words text-red-800" data-testid="output-group-error">
            {g.error}
          </span>
        )}
      </div>
      {g.output ? (
        <div className="relative">
          <pre
            tabIndex={0}
            data-testid="output-group-output"
            className={cx(
              "palette-light overflow-auto bg-slate-950 px-3 py-2 font-mono text-[12px] leading-5 whitespace-pre-wrap text-slate-100 [overflow-wrap:anywhere]",
              long && !open ? "max-h-32 overflow-hidden" : "max-h-[28rem]",
            )}
          >
            {g.output}
          </pre>
          {long && (
            <Button variant="ghost" size="sm" className="m-1" onClick={() => setOpen((o) => !o)} aria-expanded={open} data-testid="output-group-toggle">
              {open ? "Collapse output" : "Show the whole output"}
            </Button>
          )}
          {g.outputChars > GROUP_OUTPUT_SHOWN && (
            <p className="px-3 pb-1 text-xs text-slate-500">
              {g.outputChars.toLocaleString("en-US")} characters: the middle is left out here, each action&apos;s page has it whole.
            </p>
          )}
        </div>
      ) : (
        <p className="px-3 py-1.5 text-xs text-slate-500">(no output)</p>
      )}
      <div className={cx("flex flex-wrap gap-x-2 gap-y-0.5 px-3 py-1.5 text-xs", compact && "max-h-24 overflow-y-auto")} data-testid="output-group-devices">
        {g.devices.map((d, i) => (
          <Link key={g.actionIds[i]} href={`/actions/${encodeURIComponent(g.actionIds[i]!)}`} className="font-mono text-brand-700 hover:underline" title={`${d}'s action`}>
            {d}
          </Link>
        ))}
        {rest > 0 &&
          (allHref ? (
            <Link prefetch={false} href={allHref} className="text-slate-600 hover:underline">
              and {rest.toLocaleString("en-US")} more
            </Link>
          ) : (
            <span className="text-slate-600">and {rest.toLocaleString("en-US")} more</span>
          ))}
      </div>
    </li>
  );
}
