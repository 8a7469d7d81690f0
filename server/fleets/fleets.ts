/**
 * Fleets (DESIGN.md §3, OPERATOR_API.md "Fleet"): create, update, delete and read, as
 * Kubernetes-style objects `{metadata, spec, status}`.
 *
 * - Every template change (a create, or an update whose template differs) writes a new
 *   immutable TemplateVersion (number, author, time, diff against the version it replaces,
 *   outcome) and moves the fleet's `templateVersion` to it. An update that changes only the
 *   selector, policy or labels makes no version.
 * - Membership follows at once (membership.ts) in the same transaction, and so does
 *   rendering, decided in one place (`renderTemplateChange`): without a rollout policy a
 *   change goes to every member at once; with one, the rollout controller
 *   (server/rollouts/) takes over: the open rollout is superseded, a new one starts and makes
 *   its first decision in the same transaction (the canary gets the version at once).
 * - Deleting a fleet releases its members: they keep the spec they have (copied onto the
 *   device, since the template versions go with the fleet), same renderedVersion, unmanaged;
 *   a member that matches another fleet joins it.
 */
import YAML from "yaml";
import { assertAgentVersionHeld } from "../agent-dist/versions";
import { FleetInput, type DeviceTemplateSpec, type FleetSpec, type LabelSelectorObject, type RolloutPolicy, type Condition } from "../../lib/fleet-spec";
import { describeZodError } from "../../lib/protocol";
import type { Labels } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import type { Db, Prisma, Tx } from "../db";
import { conflict, invalid, notFound } from "../errors";
import { unifiedDiff } from "../../lib/unified-diff";
import { stableJson } from "../../lib/stable-json";
import { dialectOfDb, executeRaw, newestIdPer, queryRaw } from "../lib/dialect-sql";
import { afterCommit, finishEffects, newEffects, renderDevices, type Effects, type FleetRef } from "./render";
import { reconcileMembership } from "./membership";
import { parseFleetStatus, refreshFleetStatus } from "./controller";
import { runRolloutInTx, startRollout, supersedeOpenRollout } from "../rollouts/controller";
import { locks, snapshotRead, transaction } from "../lib/transactions";
import { claimInTx, type IdempotencyClaim } from "../idempotency/idempotency";

export const FLEET_API_VERSION = "drover/v1";

/**
 * Outcomes of a template version: Active is the one the fleet runs (the last that finished
 * rolling out, or the one a failed rollout reverted to); RollingOut while its rollout runs;
 * Failed when its canary failed or an operator aborted it (outcomeMessage says which);
 * Superseded when a newer one replaced it. Written by this domain at creation, then by the
 * rollout controller and the fleet controller's revert.
 */
export const TEMPLATE_VERSION_OUTCOMES = ["Pending", "RollingOut", "Active", "Failed", "Superseded"] as const;
export type TemplateVersionOutcome = (typeof TEMPLATE_VERSION_OUTCOMES)[number];

/** Metadata the server writes: sent back as read (e.g. `drover get fleet -o yaml` then apply), it is ignored like `status`. */
const SERVER_METADATA = ["generation", "createdAt", "updatedAt", "createdBy", "updatedBy", "uid"] as const;

/**
 * An operator's Fleet (JSON or YAML already parsed) validated: unknown fields are refused with
 * 400 naming the field's path; EDS's canary rules come with their own messages.
 */
export function parseFleetInput(value: unknown): FleetInput {
  let input = value;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const meta = (value as { metadata?: unknown }).metadata;
    if (meta && typeof meta === "object" && !Array.isArray(meta)) {
      const kept = Object.fromEntries(Object.entries(meta).filter(([k]) => !(SERVER_METADATA as readonly string[]).includes(k)));
      input = { ...value, metadata: kept };
    }
  }
  const r = FleetInput.safeParse(input);
  if (!r.success) throw invalid(describeZodError(r.error));
  return r.data;
}


const specYaml = (spec: unknown) => YAML.stringify(spec, { sortMapEntries: false });

const fleetSelect = {
  id: true,
  name: true,
  labels: true,
  selector: true,
  rolloutPolicy: true,
  templateVersion: true,
  generation: true,
  status: true,
  createdBy: true,
  updatedBy: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.FleetSelect;
type FleetRow = Prisma.FleetGetPayload<{ select: typeof fleetSelect }>;

interface RolloutRow {
  templateVersion: string;
  previousVersion: string | null;
  phase: string;
  state: string;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

/**
 * Which rollout a fleet shows: the open one, else the last one while it still describes the
 * fleet (it ended on the version the fleet runs, or reverted the fleet to it: a CanaryFailed
 * stays visible after the revert). A later change without a policy hides it.
 */
function shownRollout(fleet: { templateVersion: string }, latest: RolloutRow | undefined): RolloutRow | null {
  if (!latest) return null;
  if (latest.endedAt === null) return latest;
  if (latest.templateVersion === fleet.templateVersion) return latest;
  if ((latest.phase === "CanaryFailed" || latest.phase === "Aborted") && latest.previousVersion === fleet.templateVersion) return latest;
  return null;
}

/**
 * The fleet's rollout as `status.rollout`: the rollout controller's Rollout row (the engine's
 * state, the progress per stage, and for OPERATOR_API.md's shape `canaryDevices` and
 * `lastBatchReport`); its conditions (RolloutInProgress, CanaryPaused, CanaryFailed) join the
 * fleet's own, each written by its one owner.
 */
function rolloutView(r: RolloutRow | null): { view: Record<string, unknown> | null; conditions: Condition[] } {
  if (!r) return { view: null, conditions: [] };
  const state = JSON.parse(r.state) as Record<string, unknown> & { conditions?: Condition[]; canary?: { devices?: string[] } | null; batchReports?: unknown[] };
  const { conditions, ...rest } = state;
  return {
    view: {
      ...rest,
      templateVersion: r.templateVersion,
      previousVersion: r.previousVersion,
      phase: r.phase,
      startedAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
      endedAt: r.endedAt?.toISOString() ?? null,
      canaryDevices: state.canary?.devices ?? [],
      lastBatchReport: state.batchReports?.at(-1) ?? null,
    },
    conditions: Array.isArray(conditions) ? conditions : [],
  };
}

export function presentFleet(row: FleetRow, template: DeviceTemplateSpec, rollout: RolloutRow | null) {
  const status = parseFleetStatus(row.status);
  const r = rolloutView(rollout);
  const spec: FleetSpec = {
    selector: JSON.parse(row.selector) as LabelSelectorObject,
    template: { spec: template },
    ...(row.rolloutPolicy ? { rolloutPolicy: JSON.parse(row.rolloutPolicy) as RolloutPolicy } : {}),
  };
  return {
    apiVersion: FLEET_API_VERSION,
    kind: "Fleet" as const,
    metadata: {
      name: row.name,
      labels: JSON.parse(row.labels) as Labels,
      generation: row.generation,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      createdBy: row.createdBy,
      updatedBy: row.updatedBy,
    },
    spec,
    status: {
      templateVersion: row.templateVersion,
      observedGeneration: status.observedGeneration,
      conditions: [...status.conditions, ...r.conditions],
      devices: status.devices,
      rollout: r.view,
    },
  };
}
export type FleetObject = ReturnType<typeof presentFleet>;

const rolloutSelect = { templateVersion: true, previousVersion: true, phase: true, state: true, createdAt: true, updatedAt: true, endedAt: true } satisfies Prisma.RolloutSelect;

function loadFleets(ctx: ServerContext, where: Prisma.FleetWhereInput): Promise<FleetObject[]> {
  // One snapshot: a fleet's template version and its rollout's phase are written together.
  return snapshotRead(ctx.db, (db) => loadFleetsFrom(db, where));
}

async function loadFleetsFrom(db: Db, where: Prisma.FleetWhereInput): Promise<FleetObject[]> {
  const rows = await db.fleet.findMany({ where, select: fleetSelect, orderBy: { name: "asc" } });
  if (rows.length === 0) return [];
  const [templates, rollouts] = await Promise.all([
    db.templateVersion.findMany({
      where: { OR: rows.map((r) => ({ fleetId: r.id, version: Number(r.templateVersion) })) },
      select: { fleetId: true, spec: true },
    }),
    // The latest rollout of each fleet.
    queryRaw<{ id: string }[]>(db, newestIdPer(dialectOfDb(db), "Rollout", "fleetId", "createdAt"), JSON.stringify(rows.map((r) => r.id))).then((latest) => db.rollout.findMany({ where: { id: { in: latest.map((l) => l.id) } }, select: { fleetId: true, ...rolloutSelect } })),
  ]);
  return rows.map((row) => {
    const tv = templates.find((t) => t.fleetId === row.id);
    const rollout = shownRollout(row, rollouts.find((r) => r.fleetId === row.id));
    return presentFleet(row, tv ? (JSON.parse(tv.spec) as DeviceTemplateSpec) : ({} as DeviceTemplateSpec), rollout);
  });
}

export function listFleets(ctx: ServerContext): Promise<FleetObject[]> {
  return loadFleets(ctx, {});
}

export async function getFleet(ctx: ServerContext, name: string): Promise<FleetObject> {
  const [fleet] = await loadFleets(ctx, { name });
  if (!fleet) throw notFound(`fleet "${name}"`);
  return fleet;
}

/** Template versions, newest first, each with author, time, diff and outcome. */
export async function listTemplateVersions(ctx: ServerContext, name: string, limit = 100) {
  const fleet = await ctx.db.fleet.findUnique({ where: { name }, select: { id: true, templateVersion: true } });
  if (!fleet) throw notFound(`fleet "${name}"`);
  const rows = await ctx.db.templateVersion.findMany({
    where: { fleetId: fleet.id },
    orderBy: { version: "desc" },
    take: limit,
    select: { version: true, spec: true, author: true, createdAt: true, diff: true, outcome: true, outcomeMessage: true },
  });
  return rows.map((r) => ({
    version: String(r.version),
    current: String(r.version) === fleet.templateVersion,
    author: r.author,
    createdAt: r.createdAt.toISOString(),
    outcome: r.outcome as TemplateVersionOutcome,
    outcomeMessage: r.outcomeMessage,
    diff: r.diff,
    spec: JSON.parse(r.spec) as DeviceTemplateSpec,
  }));
}

/**
 * Runs a fleet change in one transaction, then wakes, publishes and recounts. It locks the
 * fleet, and the fleets' selectors (server/fleets/membership.ts): exclusively when
 * `selectors` says the change may move which fleet a device belongs to (a fleet created,
 * deleted or its selector changed), shared otherwise, so changes of two fleets' templates run
 * side by side.
 */
async function change<T>(ctx: ServerContext, actor: string, fleet: { name: string; selectors: boolean }, body: (tx: Tx, now: Date, effects: Effects) => Promise<T>): Promise<T> {
  const now = ctx.now();
  const { result, rows, effects } = await transaction(
    ctx.db,
    async (tx) => {
      const effects = newEffects(ctx.statusSettings);
      const result = await body(tx, now, effects);
      return { result, rows: await finishEffects(tx, effects, now, actor), effects };
    },
    {
      locks: [locks.fleet(fleet.name), ...(fleet.selectors ? [locks.fleetSelectors] : [])],
      sharedLocks: [locks.fleetSelectors],
      // 10,000 members re-derived in one transaction: more than Prisma's default 5 s on a busy machine.
      timeout: 60_000,
      maxWait: 30_000,
    },
  );
  afterCommit(ctx, effects, rows);
  await refreshFleetStatus(ctx, [...effects.fleets]);
  return result;
}

/**
 * A new immutable template version; the fleet's templateVersion moves to it. `rollsOut`: a
 * rollout will move members to it (outcome RollingOut; the Active one stays Active until the
 * rollout completes). Otherwise it is the Active version at once and every earlier one is
 * Superseded.
 */
async function writeTemplateVersion(
  tx: Tx,
  fleet: FleetRef,
  spec: DeviceTemplateSpec,
  previous: { version: number; spec: unknown } | null,
  actor: string,
  now: Date,
  rollsOut = false,
) {
  const last = await tx.templateVersion.findFirst({ where: { fleetId: fleet.id }, orderBy: { version: "desc" }, select: { version: true } });
  const version = (last?.version ?? 0) + 1;
  const diff = unifiedDiff(previous ? specYaml(previous.spec) : "", specYaml(spec), previous ? `version ${previous.version}` : "/dev/null", `version ${version}`);
  if (!rollsOut) {
    await tx.templateVersion.updateMany({ where: { fleetId: fleet.id, outcome: { in: ["Pending", "RollingOut", "Active"] } }, data: { outcome: "Superseded" } });
  }
  await tx.templateVersion.create({
    data: { fleetId: fleet.id, version, spec: JSON.stringify(spec), author: actor, diff, outcome: rollsOut ? "RollingOut" : "Active", createdAt: now },
  });
  await tx.fleet.update({ where: { id: fleet.id }, data: { templateVersion: String(version) } });
  return version;
}

/**
 * A template change reaches the members: the one place that decides how. A rollout still
 * open is superseded first (whatever the policy now). Without a rollout policy: every member
 * at once (Flight Control PR 1560; no Rollout row, so a 10,000-member fleet costs one
 * statement). With one: a new rollout from the version the fleet was at (or, replacing an
 * unfinished rollout, the last version that finished rolling out), whose first decision is
 * made here, in this transaction.
 */
async function renderTemplateChange(
  tx: Tx,
  fleet: FleetRef,
  change: { version: number; was: string; policy: boolean },
  now: Date,
  actor: string,
  effects: Effects,
): Promise<void> {
  const revertTo = await supersedeOpenRollout(tx, fleet, String(change.version), now, effects);
  if (!change.policy) {
    await renderDevices(tx, fleet, change.version, now, actor, effects);
    return;
  }
  await startRollout(tx, fleet, String(change.version), revertTo ?? change.was, now, effects);
}

/** The template's agent version must be a build this server holds (issue 12): members would fail to fetch it. */
async function checkTemplateAgent(ctx: ServerContext, input: FleetInput): Promise<void> {
  const version = input.spec.template.spec.agent?.version;
  if (version !== undefined) await assertAgentVersionHeld(ctx, version, "spec.template.spec.agent.version");
}

/** `claim`: the request's idempotency key (issue 22), written in the fleet's own transaction. */
export async function createFleet(ctx: ServerContext, input: FleetInput, actor: string, claim?: IdempotencyClaim): Promise<FleetObject> {
  const name = input.metadata.name;
  await checkTemplateAgent(ctx, input);
  await change(ctx, actor, { name, selectors: true }, async (tx, now, effects) => {
    await claimInTx(tx, claim, `Fleet/${name}`);
    if (await tx.fleet.findUnique({ where: { name }, select: { id: true } })) throw conflict(`fleet "${name}" already exists: PUT /fleets/${name} to change it`);
    const fleet = await tx.fleet.create({
      data: {
        name,
        labels: JSON.stringify(input.metadata.labels ?? {}),
        selector: JSON.stringify(input.spec.selector),
        rolloutPolicy: input.spec.rolloutPolicy ? JSON.stringify(input.spec.rolloutPolicy) : null,
        templateVersion: "1",
        createdBy: actor,
        updatedBy: actor,
        createdAt: now,
      },
      select: { id: true, name: true },
    });
    const version = await writeTemplateVersion(tx, fleet, input.spec.template.spec, null, actor, now);
    effects.events.push(
      { objectKind: "Fleet", objectName: name, type: "FleetCreated", reason: "Created", message: `selector ${JSON.stringify(input.spec.selector)}`, actor },
      { objectKind: "Fleet", objectName: name, type: "TemplateVersionCreated", reason: String(version), message: `template version ${version}`, actor },
    );
    effects.fleets.add(name);
    // Devices the selector matches join now (and get version 1).
    await reconcileMembership(tx, { all: true }, now, actor, effects);
  });
  return getFleet(ctx, name);
}

export interface UpdateResult {
  fleet: FleetObject;
  /** Whether anything changed (false: the same object was applied again). */
  changed: boolean;
  /** The new template version, when the template changed. */
  templateVersion: string | null;
}

export async function updateFleet(ctx: ServerContext, name: string, input: FleetInput, actor: string): Promise<UpdateResult> {
  if (input.metadata.name !== name) throw invalid(`metadata.name: "${input.metadata.name}" is not the fleet in the path ("${name}")`);
  await checkTemplateAgent(ctx, input);
  // Whether the selector changes decides the lock on the fleets' selectors; read again inside.
  const before = await ctx.db.fleet.findUnique({ where: { name }, select: { selector: true } });
  const selectors = before !== null && stableJson(JSON.parse(before.selector)) !== stableJson(input.spec.selector);
  const outcome = await change(ctx, actor, { name, selectors }, async (tx, now, effects) => {
    const fleet = await tx.fleet.findUnique({ where: { name }, select: fleetSelect });
    if (!fleet) throw notFound(`fleet "${name}"`);
    const current = await tx.templateVersion.findUnique({
      where: { fleetId_version: { fleetId: fleet.id, version: Number(fleet.templateVersion) } },
      select: { version: true, spec: true },
    });
    const currentSpec = current ? (JSON.parse(current.spec) as unknown) : null;
    const changed = {
      selector: stableJson(JSON.parse(fleet.selector)) !== stableJson(input.spec.selector),
      rolloutPolicy: stableJson(fleet.rolloutPolicy ? JSON.parse(fleet.rolloutPolicy) : null) !== stableJson(input.spec.rolloutPolicy ?? null),
      labels: stableJson(JSON.parse(fleet.labels)) !== stableJson(input.metadata.labels ?? {}),
      template: stableJson(currentSpec) !== stableJson(input.spec.template.spec),
    };
    if (changed.selector && !selectors) throw conflict(`fleet ${name}'s selector was changed concurrently: apply it again`);
    const what = Object.entries(changed).filter(([, v]) => v).map(([k]) => k);
    if (what.length === 0) return { changed: false, templateVersion: null };

    await tx.fleet.update({
      where: { id: fleet.id },
      data: {
        selector: JSON.stringify(input.spec.selector),
        rolloutPolicy: input.spec.rolloutPolicy ? JSON.stringify(input.spec.rolloutPolicy) : null,
        labels: JSON.stringify(input.metadata.labels ?? {}),
        generation: { increment: 1 },
        updatedBy: actor,
      },
    });
    effects.events.push({ objectKind: "Fleet", objectName: name, type: "FleetUpdated", reason: "Updated", message: `changed: ${what.join(", ")}`, actor });
    effects.fleets.add(name);
    let version: number | null = null;
    if (changed.template) {
      const rollsOut = input.spec.rolloutPolicy !== undefined;
      version = await writeTemplateVersion(tx, fleet, input.spec.template.spec, current && { version: current.version, spec: currentSpec }, actor, now, rollsOut);
      effects.events.push({
        objectKind: "Fleet",
        objectName: name,
        type: "TemplateVersionCreated",
        reason: String(version),
        message: `template version ${version} (was ${fleet.templateVersion})`,
        actor,
      });
    }
    // Membership first (joiners get the fleet's version as it is now), then the template.
    if (changed.selector) await reconcileMembership(tx, { all: true }, now, actor, effects);
    if (version !== null) await renderTemplateChange(tx, fleet, { version, was: fleet.templateVersion, policy: input.spec.rolloutPolicy !== undefined }, now, actor, effects);
    // A new policy applies to the open rollout at once (e.g. a canary shortened, or batches added).
    else if (changed.rolloutPolicy) await runRolloutInTx(tx, fleet.id, now, effects);
    return { changed: true, templateVersion: version === null ? null : String(version) };
  });
  return { fleet: await getFleet(ctx, name), ...outcome };
}

export async function deleteFleet(ctx: ServerContext, name: string, actor: string): Promise<{ deleted: string; devicesReleased: number }> {
  const released = await change(ctx, actor, { name, selectors: true }, async (tx, now, effects) => {
    const fleet = await tx.fleet.findUnique({ where: { name }, select: { id: true } });
    if (!fleet) throw notFound(`fleet "${name}"`);
    const members = await tx.device.findMany({ where: { owner: name }, select: { id: true, name: true } });
    // Devices keep the spec they have: copy it onto them before its template version goes.
    await executeRaw(
      tx,
      `UPDATE "Device" SET "spec" = (SELECT tv."spec" FROM "TemplateVersion" tv WHERE tv."id" = "Device"."renderedSpecId"), "renderedSpecId" = NULL
       WHERE "renderedSpecId" IN (SELECT "id" FROM "TemplateVersion" WHERE "fleetId" = ?)`,
      fleet.id,
    );
    await tx.device.updateMany({ where: { owner: name }, data: { owner: null } });
    for (const m of members) {
      effects.touched.add(m.id);
      effects.events.push({ objectKind: "Device", objectName: m.name, type: "FleetLeft", reason: name, message: `fleet ${name} was deleted; the device keeps its spec, unmanaged`, actor });
    }
    await tx.fleet.delete({ where: { id: fleet.id } });
    effects.events.push({ objectKind: "Fleet", objectName: name, type: "FleetDeleted", reason: "Deleted", message: `${members.length} devices released`, actor });
    // Released devices another fleet matches join it; overlaps naming this fleet clear.
    await reconcileMembership(tx, { all: true }, now, actor, effects);
    effects.fleets.delete(name);
    return members.length;
  });
  return { deleted: name, devicesReleased: released };
}
