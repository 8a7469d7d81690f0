"use client";

import type { DeviceDetail } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { Field } from "../ui/field";
import { EmptyState } from "../ui/states";
import { formatAbsolute, RelativeTime, toDate } from "../ui/time";
import { useClock } from "../hooks/use-now";
import { Sparkline } from "../charts/time-chart";

/** One sample of a usage series: unix seconds and a percentage (null: not reported then). */
interface SparkPoint {
  at: number;
  value: number | null;
}

type Inventory = DeviceDetail["inventory"];
type Usage = NonNullable<Inventory["usage"]>;

/** "3 h 12 m", "2 d 4 h", "45 s": how long since `from`, two units at most. */
export function formatSince(from: number, now: number): string {
  const s = Math.max(0, Math.floor((now - from) / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return h > 0 ? `${d} d ${h} h` : `${d} d`;
  if (h > 0) return m > 0 ? `${h} h ${m} m` : `${h} h`;
  if (m > 0) return `${m} m`;
  return `${s} s`;
}

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

function Since({ value, testId }: { value: string | null | undefined; testId: string }) {
  const date = toDate(value);
  const time = date?.getTime() ?? null;
  const text = useClock((now) => (time === null ? null : formatSince(time, now)));
  if (!date) return <span className="text-slate-500">—</span>;
  return (
    <time dateTime={date.toISOString()} title={formatAbsolute(date)} data-testid={testId}>
      {text}
    </time>
  );
}

const percentOf = (u: { usedBytes: number; totalBytes: number } | undefined) => (u && u.totalBytes > 0 ? (100 * u.usedBytes) / u.totalBytes : null);

function UsageTile({
  title,
  value,
  detail,
  points,
  color,
  testId,
}: {
  title: string;
  value: string | null;
  detail?: string | undefined;
  points: SparkPoint[];
  color: string;
  testId: string;
}) {
  return (
    <div className="min-w-0 rounded-md border border-slate-200 px-3 py-2">
      <div className="flex items-baseline justify-between gap-2">
        <span className="text-xs text-slate-500 uppercase">{title}</span>
        <span className="text-sm font-medium text-slate-900 tabular-nums" data-testid={testId}>
          {value ?? <span className="font-normal text-slate-500">not reported</span>}
        </span>
      </div>
      <div className="truncate text-xs text-slate-600 tabular-nums">{detail ?? "\u00a0"}</div>
      <div className="mt-1" data-testid={`${testId}-chart`} data-points={points.filter((p) => p.value !== null).length}>
        {points.length === 0 ? (
          <div className="flex h-8 items-center text-xs text-slate-500">no history yet</div>
        ) : (
          <Sparkline times={points.map((p) => p.at)} values={points.map((p) => p.value)} color={color} height={32} unit="%" ariaLabel={`${title} used, one sample a minute`} />
        )}
      </div>
    </div>
  );
}

/**
 * What an operator expects to see about a machine (issue 10): the host facts the agent
 * reports, and cpu, memory and disk now with the last two hours (one sample a minute). The
 * device page refetches once per heartbeat interval, so this follows the reports.
 */
export function InventoryCard({ device }: { device: DeviceDetail }) {
  const inv = device.inventory;
  const sys = inv.system;
  const usage: Usage | null = inv.usage;
  const history = inv.history.map((h) => ({ at: Math.floor(new Date(h.at).getTime() / 1000), cpu: h.cpuPercent, memory: h.memoryPercent, disk: h.diskPercent }));
  const series = (key: "cpu" | "memory" | "disk"): SparkPoint[] => history.map((h) => ({ at: h.at, value: h[key] }));
  const mem = percentOf(usage?.memory);
  const disk = percentOf(usage?.disk);
  return (
    <Card data-testid="inventory-card">
      <CardHeader
        title="Inventory"
        description={
          sys ? (
            <>
              Host facts as the agent sent them <RelativeTime value={inv.systemAt} />; usage as of the last report.
            </>
          ) : (
            "Host facts as the agent reports them."
          )
        }
      />
      {!sys && !usage ? (
        <EmptyState title="No host facts yet">The agent sends them with its heartbeats; agents older than this server do not.</EmptyState>
      ) : (
        <>
          {sys && (
            <dl className="grid grid-cols-2 gap-x-6 gap-y-3 px-4 py-3 sm:grid-cols-3">
              <Field label="Hostname">
                <code className="text-[13px]" data-testid="inventory-hostname" title={sys.hostname}>
                  {sys.hostname ?? "—"}
                </code>
              </Field>
              <Field label="Operating system">
                <span data-testid="inventory-os" title={sys.os ? `${sys.os.name} ${sys.os.version ?? ""}` : undefined}>
                  {sys.os ? `${sys.os.name}${sys.os.version ? ` ${sys.os.version}` : ""}` : "—"}
                </span>
              </Field>
              <Field label="Kernel">
                <code className="text-[13px]" title={sys.kernel}>
                  {sys.kernel ?? "—"}
                </code>
              </Field>
              <Field label="Architecture · CPUs">
                <span data-testid="inventory-arch">
                  {sys.arch ?? "—"} · {sys.cpus ?? "?"} {sys.cpus === 1 ? "CPU" : "CPUs"}
                </span>
              </Field>
              <Field label="Booted">
                <Since value={sys.bootTime} testId="inventory-booted" />
                {sys.bootTime && " ago"}
              </Field>
              <Field label="Agent">
                <code className="text-[13px]">{sys.agent?.version ?? "—"}</code>
                {sys.agent?.startedAt && (
                  <span className="text-slate-600">
                    {" "}
                    · up <Since value={sys.agent.startedAt} testId="inventory-agent-up" />
                  </span>
                )}
              </Field>
              <div className="col-span-full min-w-0">
                <dt className="text-xs text-slate-500">Addresses</dt>
                <dd className="mt-0.5 flex flex-wrap gap-x-3 gap-y-0.5 font-mono text-[13px] text-slate-900" data-testid="inventory-ips">
                  {sys.ips?.length ? sys.ips.map((ip) => <span key={ip}>{ip}</span>) : <span className="font-sans text-slate-500">none reported</span>}
                </dd>
              </div>
            </dl>
          )}
          <div className="grid gap-3 border-t border-slate-100 px-4 py-3 sm:grid-cols-3">
            <UsageTile
              title="CPU"
              value={usage?.cpuPercent !== undefined && usage ? `${usage.cpuPercent.toFixed(1)} %` : null}
              detail={sys?.cpus ? `of ${sys.cpus} ${sys.cpus === 1 ? "CPU" : "CPUs"}` : undefined}
              points={series("cpu")}
              color="var(--color-sky-500)"
              testId="usage-cpu"
            />
            <UsageTile
              title="Memory"
              value={mem === null ? null : `${mem.toFixed(0)} %`}
              detail={usage?.memory ? `${formatBytes(usage.memory.usedBytes)} of ${formatBytes(usage.memory.totalBytes)}` : undefined}
              points={series("memory")}
              color="var(--color-violet-500)"
              testId="usage-memory"
            />
            <UsageTile
              title="Disk"
              value={disk === null ? null : `${disk.toFixed(0)} %`}
              detail={usage?.disk ? `${formatBytes(usage.disk.usedBytes)} of ${formatBytes(usage.disk.totalBytes)}` : undefined}
              points={series("disk")}
              color="var(--color-teal-500)"
              testId="usage-disk"
            />
          </div>
        </>
      )}
    </Card>
  );
}
