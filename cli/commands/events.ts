import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { apiFor, note, outputOption, write, type Format } from "../context";
import type { Api } from "../http";
import { alignRows, eventCells, eventColumns, formatData } from "../output";
import type { DroverEvent } from "../types";
import { pollThroughRestarts, untilCtrlC } from "../watch";

import { parseLimit } from "./get";

/** The object kinds the server records events for (it refuses another, naming it). */
type EventKind = NonNullable<NonNullable<Parameters<typeof import("../http").Api.prototype.call<"get", "/events">>[2]>["query"]>["kind"];

const PAGE = 1000;
/** Re-ask this far back: an event committed late with an earlier time is still caught. */
const OVERLAP_MS = 5_000;

interface Filter {
  kind?: string | undefined;
  name?: string | undefined;
}

interface EventsOptions extends Filter {
  since?: string;
  limit: number;
  follow?: boolean;
  interval: number;
  output: Format;
}

/**
 * Every event at or after `since`, paging back with beforeId while pages are full. The
 * route has no afterId, so callers de-duplicate by id.
 */
async function eventsSince(api: Api, filter: Filter, since: string | undefined, signal: AbortSignal): Promise<DroverEvent[]> {
  const all: DroverEvent[] = [];
  let beforeId: number | undefined;
  for (;;) {
    const page = await api.call("get", "/events", { query: { ...filter, kind: filter.kind as EventKind | undefined, since, beforeId, limit: PAGE }, signal });
    all.push(...page.items);
    if (page.items.length < PAGE) return all;
    beforeId = Math.min(...page.items.map((e) => e.id));
  }
}

/** Prints batches of events, oldest first; a table keeps its columns aligned across batches. */
function printer(format: Format, stream: boolean) {
  let widths: number[] | null = null;
  return (events: DroverEvent[]) => {
    if (format === "json") {
      if (stream) for (const e of events) write(JSON.stringify(e) + "\n");
      else write(formatData({ items: events }, "json"));
    } else if (format === "yaml") {
      if (stream) for (const e of events) write("---\n" + formatData(e, "yaml"));
      else write(formatData({ items: events }, "yaml"));
    } else if (events.length > 0) {
      const cells = eventCells(events);
      if (widths === null) cells.unshift(eventColumns.map((c) => c.header));
      const aligned = alignRows(cells, widths ?? []);
      widths = aligned.widths;
      write(aligned.lines.join("\n") + "\n");
    } else if (!stream) {
      note("No events found.");
    }
  };
}

export function registerEvents(program: Command): void {
  program
    .command("events")
    .description("the event log, oldest to newest; --follow keeps printing new events until Ctrl-C")
    .option("--kind <kind>", "only this object kind: Device, EnrollmentRequest, Action, User or Server")
    .option("--name <name>", "only this object (a device name, an action id, ...)")
    .option("--since <time>", "only events at or after this time (ISO 8601)")
    .option("--limit <n>", "how many of the newest events to show first", parseLimit, 100)
    .option("-f, --follow", "keep printing new events (polls every second)")
    .addOption(outputOption())
    .option("--interval <ms>", "poll interval with --follow", parseLimit, 1000)
    .addHelpText("after", "\nWith --follow, -o json prints one event per line and -o yaml one document per event.")
    .action(async (opts: EventsOptions, cmd: Command) => {
      const api = apiFor(cmd);
      const filter: Filter = { kind: opts.kind, name: opts.name };
      await untilCtrlC(opts.follow === true, async (signal) => {
        const first = await api.call("get", "/events", { query: { ...filter, kind: filter.kind as EventKind | undefined, since: opts.since, limit: opts.limit }, signal });
        const print = printer(opts.output, opts.follow === true);
        const initial = first.items.reverse();
        print(initial);
        if (opts.follow) await follow(api, filter, opts, initial, print, signal);
      });
    });
}

async function follow(
  api: Api,
  filter: Filter,
  opts: EventsOptions,
  initial: DroverEvent[],
  print: (events: DroverEvent[]) => void,
  signal: AbortSignal,
): Promise<void> {
  const seen = new Map<number, number>(); // id → time (ms)
  let newest: number | null = opts.since ? Date.parse(opts.since) + OVERLAP_MS : null;
  const remember = (e: DroverEvent) => {
    const t = Date.parse(e.time);
    seen.set(e.id, t);
    newest = Math.max(newest ?? t, t);
  };
  initial.forEach(remember);
  // Older events that --limit left out are not news: only ids after the newest shown count.
  const floor = Math.max(0, ...initial.map((e) => e.id));
  const poll = pollThroughRestarts();
  while (!signal.aborted) {
    await sleep(opts.interval, undefined, { signal });
    const since = newest === null ? undefined : new Date(newest - OVERLAP_MS).toISOString();
    const events = await poll(() => eventsSince(api, filter, since, signal));
    if (events === undefined) continue;
    const fresh = events.filter((e) => e.id > floor && !seen.has(e.id)).sort((a, b) => a.id - b.id);
    fresh.forEach(remember);
    if (newest !== null) for (const [id, t] of seen) if (t < newest - 2 * OVERLAP_MS) seen.delete(id);
    print(fresh);
  }
}
