/**
 * Enrollment tokens (issue 12): `drover create enrollment-token`, `drover get enrollment-tokens`,
 * `drover revoke enrollment-token ID`. The secret is printed once, at creation, with the
 * install command that carries it.
 */
import { InvalidArgumentError, type Command } from "commander";
import { apiFor, note, outputOption, serverOf, write, type Format } from "../context";
import { formatAge, formatData, formatLabels, formatTable, type Column } from "../output";
import { isValidLabelKey, isValidLabelValue } from "../../lib/label-selector";
import { parseDuration } from "../../lib/duration";
import { parseLimit } from "./get";

export interface EnrollmentToken {
  id: string;
  name: string;
  description: string | null;
  prefix: string;
  labels: Record<string, string>;
  expiresAt: string | null;
  maxUses: number | null;
  uses: number;
  autoApprove: boolean;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
  status: string;
  /** Only in the answer to create. */
  token?: string;
}

/** "until" rather than an age: an expiry is in the future. */
function formatExpiry(at: string | null, now: Date): string {
  if (!at) return "never";
  const ms = Date.parse(at) - now.getTime();
  if (ms <= 0) return "expired";
  return `in ${formatAge(new Date(now.getTime() - ms).toISOString(), now)}`;
}

export const enrollmentTokenColumns: Column<EnrollmentToken>[] = [
  { header: "ID", cell: (t) => t.id },
  { header: "NAME", cell: (t) => t.name },
  { header: "PREFIX", cell: (t) => `${t.prefix}…` },
  { header: "LABELS", cell: (t) => formatLabels(t.labels) },
  { header: "USES", cell: (t) => `${t.uses}/${t.maxUses ?? "∞"}` },
  { header: "EXPIRES", cell: (t, now) => formatExpiry(t.expiresAt, now) },
  { header: "AUTO-APPROVE", cell: (t) => (t.autoApprove ? "yes" : "no") },
  { header: "STATUS", cell: (t) => t.status },
  { header: "AGE", cell: (t, now) => formatAge(t.createdAt, now) },
];

/** `--label k=v`, repeatable, checked with the server's rules before any request. */
function collectLabel(value: string, previous: Record<string, string>): Record<string, string> {
  const at = value.indexOf("=");
  const key = at < 0 ? value : value.slice(0, at);
  const labelValue = at < 0 ? "" : value.slice(at + 1);
  if (at < 0 || !isValidLabelKey(key)) throw new InvalidArgumentError("expected key=value with a valid label key, e.g. site=lab");
  if (!isValidLabelValue(labelValue)) throw new InvalidArgumentError("invalid label value: at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric");
  return { ...previous, [key]: labelValue };
}

/** 30m, 24h, 7d → seconds. */
export function parseExpiresIn(value: string): number {
  const days = /^(\d+)d$/.exec(value);
  if (days) return Number(days[1]) * 86_400;
  try {
    return Math.max(1, Math.round(parseDuration(value) / 1000));
  } catch {
    throw new InvalidArgumentError(`not a duration: "${value}" (e.g. 30m, 24h, 7d)`);
  }
}

function parseMaxUses(value: string): number {
  return parseLimit(value);
}

/** The subcommand group `name` made by another register* function, or a new one. */
function group(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

interface CreateOptions {
  name?: string;
  description?: string;
  label: Record<string, string>;
  expiresIn?: number;
  maxUses?: number;
  autoApprove?: boolean;
  output: Format;
}

export function registerEnrollmentTokens(program: Command): void {
  group(program, "create", "create objects")
    .command("enrollment-token")
    .description("create an enrollment token: devices that enroll with it get its labels and, with --auto-approve, are approved at once. The token is printed once")
    .option("--name <name>", "what it is for, shown in lists (default: enrollment-<date>)")
    .option("--description <text>", "a longer note")
    .option("-l, --label <key=value>", "put this label on every device enrolling with it, over the agent's own (repeatable)", collectLabel, {})
    .option("--expires-in <duration>", "refuse it after this long (30m, 24h, 7d; default: never)", parseExpiresIn)
    .option("--max-uses <n>", "how many devices may enroll with it (default: no limit)", parseMaxUses)
    .option("--auto-approve", "approve devices enrolling with it at once (otherwise they wait for an operator)")
    .addOption(outputOption())
    .addHelpText(
      "after",
      "\nExamples:\n  drover create enrollment-token --name lab --label site=lab --expires-in 24h --max-uses 10 --auto-approve\n  curl -fsSL SERVER/install.sh | sudo sh -s -- --token drvt_…",
    )
    .action(async (opts: CreateOptions, cmd: Command) => {
      const created = await apiFor(cmd).post<EnrollmentToken & { token: string }>("/enrollment-tokens", {
        name: opts.name ?? `enrollment-${new Date().toISOString().slice(0, 10)}`,
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        labels: opts.label,
        ...(opts.expiresIn !== undefined ? { expiresInSeconds: opts.expiresIn } : {}),
        ...(opts.maxUses !== undefined ? { maxUses: opts.maxUses } : {}),
        autoApprove: opts.autoApprove === true,
      });
      if (opts.output !== "table") return write(formatData(created, opts.output));
      write(`enrollment-token/${created.id} created (${created.name})\n`);
      write(`token: ${created.token}\n`);
      write(`install: curl -fsSL ${serverOf(cmd)}/install.sh | sudo sh -s -- --token ${created.token}\n`);
      note("The token is shown only now: the server keeps its hash. Keep it, or revoke it and make another.");
    });

  group(program, "get", "list or show objects")
    .command("enrollment-tokens")
    .alias("enrollment-token")
    .description("enrollment tokens, newest first: prefix, labels, uses, expiry, auto-approve, status (one with ID); never the token itself")
    .argument("[id]", "a token id")
    .option("--limit <n>", "at most this many (server default 200, max 1000)", parseLimit)
    .addOption(outputOption())
    .action(async (id: string | undefined, opts: { limit?: number; output: Format }, cmd: Command) => {
      const api = apiFor(cmd);
      if (id) {
        const one = await api.call("get", "/enrollment-tokens/{id}", { path: { id } });
        return write(opts.output === "table" ? formatTable(enrollmentTokenColumns, [one]) : formatData(one, opts.output));
      }
      const page = await api.call("get", "/enrollment-tokens", { query: { limit: opts.limit } });
      if (opts.output !== "table") return write(formatData(page, opts.output));
      if (page.items.length === 0) return note("No enrollment tokens found.");
      write(formatTable(enrollmentTokenColumns, page.items));
    });

  group(program, "revoke", "revoke tokens")
    .command("enrollment-token")
    .alias("enrollment-tokens")
    .description("revoke enrollment tokens: enrollments with one are refused from now on; devices it enrolled stay. Already revoked: no change")
    .argument("<ids...>", "token ids (drover get enrollment-tokens)")
    .action(async (ids: string[], _opts: unknown, cmd: Command) => {
      const api = apiFor(cmd);
      for (const id of [...new Set(ids)]) {
        const t = await api.call("delete", "/enrollment-tokens/{id}", { path: { id } });
        write(`enrollment-token/${t.id} revoked (${t.name}, ${t.uses} use${t.uses === 1 ? "" : "s"})\n`);
      }
    });
}
