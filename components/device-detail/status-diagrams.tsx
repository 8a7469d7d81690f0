"use client";

import { deviceStatusMachines } from "@/lib/device-status";
import type { StateMachine } from "@/lib/state-machine";
import type { DeviceDetail } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { StatusBadge } from "../status/status-badge";
import { toneOf } from "../status/tones";
import {
  applicationSummaryTone,
  decommissioningTone,
  lifecycleTone,
  summaryTone,
  updateStateTone,
  updatedTone,
} from "../status/tones";
import type { Tone } from "../ui/badge";
import { StateDiagram } from "../state-diagram/state-diagram";
import { specFromMachine } from "../state-diagram/from-machine";
import { DiagramLegend } from "../state-diagram/legend";
import { cx } from "../ui/cx";

type AxisKey = keyof typeof deviceStatusMachines;

interface AxisView {
  key: AxisKey;
  title: string;
  field: string;
  tones: Record<string, Tone>;
  current: (d: DeviceDetail) => string | null;
  /** Drawn across the page: its diagram is wider than half of it at a readable size. */
  wide: boolean;
  none: string;
}

const AXES: AxisView[] = [
  { key: "summary", title: "Device status", field: "status.summary", tones: summaryTone, current: (d) => d.summary, wide: true, none: "" },
  { key: "updated", title: "Update status", field: "status.updated.status", tones: updatedTone, current: (d) => d.updatedStatus, wide: false, none: "" },
  { key: "applicationSummary", title: "Application status", field: "status.applicationSummary", tones: applicationSummaryTone, current: (d) => d.applicationSummary, wide: false, none: "" },
  { key: "updateState", title: "Update state", field: "conditions.Updating.reason", tones: updateStateTone, current: (d) => d.updatingReason, wide: true, none: "No update reported" },
  // Lifecycle is one row of four states: across the page it is a strip, in half of it a tall
  // column beside an empty band. Decommissioning then has the row to itself.
  { key: "lifecycle", title: "Lifecycle", field: "status.lifecycle", tones: lifecycleTone, current: (d) => d.lifecycle, wide: true, none: "" },
  { key: "decommissioning", title: "Decommissioning", field: "conditions.DeviceDecommissioning.reason", tones: decommissioningTone, current: (d) => d.decommissioning, wide: true, none: "Not requested" },
];

function Diagram({ axis, device }: { axis: AxisView; device: DeviceDetail }) {
  const machine = deviceStatusMachines[axis.key] as StateMachine<string>;
  const current = axis.current(device);
  const description = current ? machine.states[current]?.description : undefined;
  return (
    <Card className={cx(axis.wide && "lg:col-span-2")} data-testid={`diagram-${axis.key}`}>
      <CardHeader
        title={
          <span className="flex items-center gap-2">
            {axis.title}
            <code className="text-xs font-normal text-slate-600">{axis.field}</code>
          </span>
        }
        description={description ?? (current ? undefined : axis.none)}
        actions={current ? <StatusBadge table={axis.tones} state={current} data-testid={`diagram-${axis.key}-current`} /> : undefined}
      />
      <StateDiagram
        spec={specFromMachine(machine)}
        current={current}
        highlight={toneOf(axis.tones, current)}
        title={axis.title}
        ariaLabel={`${axis.title} state diagram${current ? `, current state ${current}` : ""}`}
        testId={`state-diagram-${axis.key}`}
      />
    </Card>
  );
}

/** Every status axis of the device as a live state diagram, drawn from lib/device-status. */
export function StatusDiagrams({ device }: { device: DeviceDetail }) {
  return (
    <section className="mt-6">
      <div className="mb-3 flex flex-wrap items-end justify-between gap-2">
        <div>
          <h2 className="text-base font-semibold text-slate-900">State diagrams</h2>
          <p className="text-xs text-slate-500">The state tables the server enforces, with this device&apos;s current state highlighted. Updates live.</p>
        </div>
        <DiagramLegend />
      </div>
      {/* items-start: a card is as tall as its own diagram, not its neighbour's. */}
      <div className="grid items-start gap-4 lg:grid-cols-2">
        {AXES.map((axis) => (
          <Diagram key={axis.key} axis={axis} device={device} />
        ))}
      </div>
    </section>
  );
}
