/**
 * The console's workflow editor (issue 9) without React: the document an operator draws
 * (steps with their canvas positions, the workflow's own fields) and every rule the canvas
 * applies as it is drawn. The rules are lib/workflow-spec's, so the editor refuses what the
 * server would refuse, with the same words: a dependency that closes a cycle is refused when
 * it is connected (`canConnect`), the draft is checked continuously (`draftProblems`: the
 * WorkflowInput schema, then `validateWorkflowGraph`), and each problem is pinned to its step.
 *
 * Positions live beside the spec, never in it: the server's schema is strict, and a YAML
 * edit or an import keeps the positions of the steps it knows. Steps that have started in a
 * running workflow are `locked`: the server refuses (409) any change to them, so the editor
 * refuses first. Pure: no clock, no I/O; the layout function is passed in.
 */
import YAML from "yaml";
import { stableJson } from "./stable-json";
import type { z } from "zod";
import { parseYamlWith, type YamlProblem } from "./yaml-problems";
import { findCycle, StepName, validateWorkflowGraph, WORKFLOW_API_VERSION, WorkflowInput, type WorkflowProblem, WorkflowSchedule, WorkflowStep } from "./workflow-spec";
import { formatSelector, parseSelector, SelectorError } from "./label-selector";
import { selectorRequirements, type LabelSelectorObject } from "./fleet-spec";

/** A step as drawn: the schema's input shape, possibly incomplete (a new job has no targets yet). */
export type StepDraft = z.input<typeof WorkflowStep>;
export type JobDraft = NonNullable<StepDraft["jobTemplate"]>;
export interface XY {
  x: number;
  y: number;
}

export type ScheduleDraft = z.input<typeof WorkflowSchedule>;

export interface EditorDoc {
  name: string;
  labels?: Record<string, string>;
  failFast: boolean;
  activeDeadlineSeconds?: number;
  /** A cron schedule (the server starts a run at each tick). */
  schedule?: ScheduleDraft;
  /** In the order they were added (the YAML's order). */
  steps: Record<string, StepDraft>;
  /** Top-left corner of each step's node on the canvas. */
  positions: Record<string, XY>;
}

export type Outcome = { ok: true; doc: EditorDoc } | { ok: false; reason: string };
export type Check = { ok: true } | { ok: false; reason: string };

/** Steps the editor must not change (started in the current run). */
export type Locked = ReadonlySet<string>;
const NONE: Locked = new Set();

export function emptyDoc(name = ""): EditorDoc {
  return { name, failFast: true, steps: {}, positions: {} };
}

// ---------------------------------------------------------------------------------------
// Document ↔ Workflow object

/** The Workflow object the server is sent (as written: no defaults added, positions left out). */
export function toInput(doc: EditorDoc): { apiVersion: string; kind: "Workflow"; metadata: { name: string; labels?: Record<string, string> }; spec: Record<string, unknown> } {
  return {
    apiVersion: WORKFLOW_API_VERSION,
    kind: "Workflow",
    metadata: { name: doc.name, ...(doc.labels ? { labels: doc.labels } : {}) },
    spec: {
      ...(doc.schedule ? { schedule: doc.schedule } : {}),
      ...(doc.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: doc.activeDeadlineSeconds } : {}),
      failFast: doc.failFast,
      steps: Object.fromEntries(Object.entries(doc.steps).map(([name, step]) => [name, ordered(step)])),
    },
  };
}

const STEP_KEYS = ["dependencies", "when", "jobTemplate", "externalRef", "retryStrategy"];

/** A step's fields in one order (what it waits for first, then what it does), however it was built: the YAML reads the same after any edit. */
function ordered(step: StepDraft): StepDraft {
  const out: Record<string, unknown> = {};
  for (const k of STEP_KEYS) if (k in step) out[k] = step[k as keyof StepDraft];
  for (const [k, v] of Object.entries(step)) if (!(k in out)) out[k] = v;
  return out as StepDraft;
}

/** A Workflow object (the server's, or parsed YAML) as a document; positions of the steps `previous` knows are kept. */
export function fromInput(
  value: { metadata: { name: string; labels?: Record<string, string> | undefined }; spec: { schedule?: ScheduleDraft | undefined; failFast?: boolean | undefined; activeDeadlineSeconds?: number | undefined; steps: Record<string, StepDraft> } },
  previous?: Pick<EditorDoc, "positions">,
): EditorDoc {
  const steps = structuredClone(value.spec.steps);
  const positions: Record<string, XY> = {};
  for (const name of Object.keys(steps)) {
    const p = previous?.positions[name];
    if (p) positions[name] = p;
  }
  return {
    name: value.metadata.name,
    ...(value.metadata.labels ? { labels: { ...value.metadata.labels } } : {}),
    failFast: value.spec.failFast ?? true,
    ...(value.spec.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: value.spec.activeDeadlineSeconds } : {}),
    ...(value.spec.schedule ? { schedule: { ...value.spec.schedule } } : {}),
    steps,
    positions,
  };
}

/** Steps without a position (new from YAML or an import) get the layout's; when any is missing every step is laid out again, so none overlaps. */
export function placeMissing(doc: EditorDoc, layout: (steps: Record<string, StepDraft>) => ReadonlyMap<string, XY>): EditorDoc {
  if (Object.keys(doc.steps).every((n) => doc.positions[n])) return doc;
  return applyLayout(doc, layout);
}

export function applyLayout(doc: EditorDoc, layout: (steps: Record<string, StepDraft>) => ReadonlyMap<string, XY>): EditorDoc {
  const at = layout(doc.steps);
  const positions: Record<string, XY> = {};
  for (const name of Object.keys(doc.steps)) positions[name] = at.get(name) ?? doc.positions[name] ?? { x: 0, y: 0 };
  return { ...doc, positions };
}

export function toYaml(doc: EditorDoc): string {
  return YAML.stringify(toInput(doc), { lineWidth: 0 });
}

export interface YamlImport {
  /** Schema and graph problems, each at its line. */
  problems: YamlProblem[];
  /** The document when the YAML parsed and validated (positions from `previous` where the step is known). */
  doc: EditorDoc | null;
}

/** YAML typed by the operator: its problems at their lines (lib/yaml-problems), and the document when it is a valid Workflow. */
export function fromYaml(text: string, previous?: Pick<EditorDoc, "positions">): YamlImport {
  const parsed = parseYamlWith(text, WorkflowInput, "write a Workflow object");
  if (parsed.problems.length > 0 || !parsed.input) return { problems: parsed.problems, doc: null };
  const graph = validateWorkflowGraph(parsed.input.spec.steps);
  if (graph.length > 0) return { problems: graph.map((p) => ({ line: parsed.lineOf(p.path.split(".")), path: p.path, message: p.message })), doc: null };
  // The value as written (not the schema's output): defaults the operator left out stay out.
  const raw = parsed.value as Parameters<typeof fromInput>[0];
  return { problems: [], doc: fromInput(raw, previous) };
}

// ---------------------------------------------------------------------------------------
// Edges

export interface DraftEdge {
  id: string;
  /** The dependency. */
  source: string;
  /** The step that depends on it. */
  target: string;
}

export function edgeId(source: string, target: string): string {
  return `${source}->${target}`;
}

/** One edge per dependency that names a step of the document (dependency → dependent). */
export function edgesOf(doc: Pick<EditorDoc, "steps">): DraftEdge[] {
  const out: DraftEdge[] = [];
  for (const [name, step] of Object.entries(doc.steps)) {
    for (const dep of new Set(step.dependencies ?? [])) if (dep in doc.steps) out.push({ id: edgeId(dep, name), source: dep, target: name });
  }
  return out;
}

/** A cycle's path rotated to start (and end) at `from`, as "a->b->a". */
function cycleFrom(cycle: string[], from: string): string {
  const ring = cycle.slice(0, -1);
  const i = ring.indexOf(from);
  const rotated = i < 0 ? ring : [...ring.slice(i), ...ring.slice(0, i)];
  return [...rotated, rotated[0]].join("->");
}

/**
 * Whether `target` may depend on `source` (an edge drawn from source to target): not itself,
 * not twice, not a locked step, and not closing a cycle (the would-be graph through
 * findCycle, the path named from the dependent: "a->d->b->a" reads a depends on d, which
 * depends on b, which depends on a).
 */
export function canConnect(doc: Pick<EditorDoc, "steps">, source: string, target: string, locked: Locked = NONE): Check {
  if (!(source in doc.steps) || !(target in doc.steps)) return { ok: false, reason: `refused: no step named "${!(source in doc.steps) ? source : target}"` };
  if (source === target) return { ok: false, reason: `refused: dependency cycle ${source}->${source} (a step cannot depend on itself)` };
  const deps = doc.steps[target]?.dependencies ?? [];
  if (deps.includes(source)) return { ok: false, reason: `refused: ${target} already depends on ${source}` };
  if (locked.has(target)) return { ok: false, reason: `refused: step ${target} has started, its dependencies cannot change` };
  const cycle = findCycle({ ...doc.steps, [target]: { dependencies: [...deps, source] } });
  if (cycle) return { ok: false, reason: `refused: dependency cycle ${cycleFrom(cycle, target)}` };
  return { ok: true };
}

export function connect(doc: EditorDoc, source: string, target: string, locked: Locked = NONE): Outcome {
  const check = canConnect(doc, source, target, locked);
  if (!check.ok) return check;
  const step = doc.steps[target]!;
  return { ok: true, doc: withStep(doc, target, { ...step, dependencies: [...(step.dependencies ?? []), source] }) };
}

export function disconnect(doc: EditorDoc, source: string, target: string, locked: Locked = NONE): Outcome {
  const step = doc.steps[target];
  if (!step || !(step.dependencies ?? []).includes(source)) return { ok: true, doc };
  if (locked.has(target)) return { ok: false, reason: `refused: step ${target} has started, its dependencies cannot change` };
  return { ok: true, doc: withStep(doc, target, withoutDeps(step, new Set([source]))) };
}

function withoutDeps(step: StepDraft, gone: ReadonlySet<string>): StepDraft {
  const { dependencies, ...rest } = step;
  const kept = (dependencies ?? []).filter((d) => !gone.has(d));
  return kept.length ? { ...rest, dependencies: kept } : rest;
}

function withStep(doc: EditorDoc, name: string, step: StepDraft): EditorDoc {
  return { ...doc, steps: { ...doc.steps, [name]: step } };
}

// ---------------------------------------------------------------------------------------
// Steps: add, change, rename, delete

/** `base` if free, else base-2, base-3… (a trailing -n of base is replaced, so copies of "a-2" are "a-3", not "a-2-2"). */
export function freshName(base: string, taken: { has(name: string): boolean }): string {
  let clean = base.replace(/[^-A-Za-z0-9]/g, "-").replace(/^[^A-Za-z]+/, "");
  if (!clean) clean = "step";
  clean = clean.slice(0, 120);
  if (!taken.has(clean)) return clean;
  const stem = clean.replace(/-\d+$/, "") || clean;
  for (let i = 2; ; i++) {
    const name = `${stem}-${i}`;
    if (!taken.has(name)) return name;
  }
}

export type NewStep = { type: "job"; kind: string } | { type: "reference"; workflow: string };

/** A new step from the palette: a job of that kind (no targets yet: the problem says so) or a reference. */
export function newStepDraft(what: NewStep): { base: string; step: StepDraft } {
  if (what.type === "job") return { base: what.kind, step: { jobTemplate: { kind: what.kind, args: {}, targets: {} } } };
  return { base: `run-${what.workflow}`, step: { externalRef: { kind: "Workflow", name: what.workflow } } };
}

export function addStep(doc: EditorDoc, what: NewStep, position: XY): { doc: EditorDoc; name: string } {
  const { base, step } = newStepDraft(what);
  const name = freshName(base, new Set(Object.keys(doc.steps)));
  return { name, doc: { ...doc, steps: { ...doc.steps, [name]: step }, positions: { ...doc.positions, [name]: position } } };
}

/** The first spot from `start` downwards where a node of `size` overlaps none of `positions` (a clicked palette item lands in view, not on another step). */
export function freeSpot(positions: Readonly<Record<string, XY>>, start: XY, size: { width: number; height: number }, gap = 16): XY {
  const all = Object.values(positions);
  const at = { ...start };
  for (let i = 0; i < 1000; i++) {
    const hit = all.find((p) => Math.abs(p.x - at.x) < size.width + gap && Math.abs(p.y - at.y) < size.height + gap);
    if (!hit) return at;
    at.y = hit.y + size.height + gap;
  }
  return at;
}

export function updateStep(doc: EditorDoc, name: string, step: StepDraft, locked: Locked = NONE): Outcome {
  if (!(name in doc.steps)) return { ok: false, reason: `no step named "${name}"` };
  if (locked.has(name)) return { ok: false, reason: `refused: step ${name} has started, it cannot be changed` };
  return { ok: true, doc: withStep(doc, name, step) };
}

export function moveSteps(doc: EditorDoc, moves: Readonly<Record<string, XY>>): EditorDoc {
  const positions = { ...doc.positions };
  for (const [name, p] of Object.entries(moves)) if (name in doc.steps) positions[name] = { x: p.x, y: p.y };
  return { ...doc, positions };
}

/** `when` with the step `from` renamed `to` (a whole term: "b" and "b.Failed", not "bb"). */
export function renameInWhen(when: string, from: string, to: string): string {
  const escaped = from.replace(/[-]/g, "\\-");
  return when.replace(new RegExp(`(?<![-A-Za-z0-9.])${escaped}(?![-A-Za-z0-9])`, "g"), to);
}

/** Renames a step; every dependency on it (and every `when` naming it) follows. Order kept. */
export function renameStep(doc: EditorDoc, from: string, to: string, locked: Locked = NONE): Outcome {
  if (from === to) return { ok: true, doc };
  if (!(from in doc.steps)) return { ok: false, reason: `no step named "${from}"` };
  const check = StepName.safeParse(to);
  if (!check.success) return { ok: false, reason: `step name "${to}": ${check.error.issues[0]?.message ?? "invalid"}` };
  if (to in doc.steps) return { ok: false, reason: `a step named "${to}" already exists` };
  if (locked.has(from)) return { ok: false, reason: `refused: step ${from} has started, it cannot be renamed` };
  const dependents = Object.entries(doc.steps).filter(([, s]) => (s.dependencies ?? []).includes(from)).map(([n]) => n);
  const lockedDependent = dependents.find((n) => locked.has(n));
  if (lockedDependent) return { ok: false, reason: `refused: step ${lockedDependent} has started and depends on ${from}` };
  const steps: Record<string, StepDraft> = {};
  for (const [name, step] of Object.entries(doc.steps)) {
    let s = step;
    if ((s.dependencies ?? []).includes(from)) {
      s = { ...s, dependencies: s.dependencies!.map((d) => (d === from ? to : d)) };
      if (s.when !== undefined) s = { ...s, when: renameInWhen(s.when, from, to) };
    }
    steps[name === from ? to : name] = s;
  }
  const positions: Record<string, XY> = {};
  for (const [name, p] of Object.entries(doc.positions)) positions[name === from ? to : name] = p;
  return { ok: true, doc: { ...doc, steps, positions } };
}

/** Deletes steps and the dependencies on them; refused when one is locked or a locked step depends on one. */
export function deleteSteps(doc: EditorDoc, names: readonly string[], locked: Locked = NONE): Outcome {
  const gone = new Set(names.filter((n) => n in doc.steps));
  if (gone.size === 0) return { ok: true, doc };
  const lockedOne = [...gone].find((n) => locked.has(n));
  if (lockedOne) return { ok: false, reason: `refused: step ${lockedOne} has started, it cannot be deleted` };
  for (const [name, s] of Object.entries(doc.steps)) {
    if (gone.has(name) || !locked.has(name)) continue;
    const dep = (s.dependencies ?? []).find((d) => gone.has(d));
    if (dep) return { ok: false, reason: `refused: step ${name} has started and depends on ${dep}` };
  }
  const steps: Record<string, StepDraft> = {};
  const positions: Record<string, XY> = {};
  for (const [name, s] of Object.entries(doc.steps)) {
    if (gone.has(name)) continue;
    steps[name] = (s.dependencies ?? []).some((d) => gone.has(d)) ? withoutDeps(s, gone) : s;
    const p = doc.positions[name];
    if (p) positions[name] = p;
  }
  return { ok: true, doc: { ...doc, steps, positions } };
}

/** Removes edges (dependency → dependent); refused when a dependent is locked. */
export function deleteEdges(doc: EditorDoc, edges: readonly Pick<DraftEdge, "source" | "target">[], locked: Locked = NONE): Outcome {
  let next = doc;
  for (const e of edges) {
    const r = disconnect(next, e.source, e.target, locked);
    if (!r.ok) return r;
    next = r.doc;
  }
  return { ok: true, doc: next };
}

// ---------------------------------------------------------------------------------------
// Copy and paste

export interface Clip {
  steps: Record<string, StepDraft>;
  positions: Record<string, XY>;
}

/** The selected steps, with only the dependencies inside the selection. */
export function copySteps(doc: EditorDoc, names: readonly string[]): Clip {
  const inside = new Set(names.filter((n) => n in doc.steps));
  const steps: Record<string, StepDraft> = {};
  const positions: Record<string, XY> = {};
  for (const name of Object.keys(doc.steps)) {
    if (!inside.has(name)) continue;
    const s = structuredClone(doc.steps[name]!);
    const outside = new Set((s.dependencies ?? []).filter((d) => !inside.has(d)));
    steps[name] = outside.size ? withoutDeps(s, outside) : s;
    positions[name] = doc.positions[name] ?? { x: 0, y: 0 };
  }
  return { steps, positions };
}

/** Pastes a clip: each step under a fresh name, the dependencies inside the clip renamed with it, moved by `offset`. */
export function pasteSteps(doc: EditorDoc, clip: Clip, offset: XY = { x: 40, y: 40 }): { doc: EditorDoc; names: string[] } {
  const taken = new Set(Object.keys(doc.steps));
  const rename = new Map<string, string>();
  for (const name of Object.keys(clip.steps)) {
    const fresh = freshName(name, taken);
    taken.add(fresh);
    rename.set(name, fresh);
  }
  const steps = { ...doc.steps };
  const positions = { ...doc.positions };
  for (const [name, step] of Object.entries(clip.steps)) {
    const s: StepDraft = structuredClone(step);
    if (s.dependencies) s.dependencies = s.dependencies.map((d) => rename.get(d) ?? d);
    if (s.when !== undefined) for (const [from, to] of rename) s.when = renameInWhen(s.when, from, to);
    const to = rename.get(name)!;
    steps[to] = s;
    const p = clip.positions[name] ?? { x: 0, y: 0 };
    positions[to] = { x: p.x + offset.x, y: p.y + offset.y };
  }
  return { doc: { ...doc, steps, positions }, names: [...rename.values()] };
}

// ---------------------------------------------------------------------------------------
// Undo and redo

export interface History<T> {
  past: T[];
  present: T;
  future: T[];
}

export const HISTORY_CAP = 100;

export function historyOf<T>(present: T): History<T> {
  return { past: [], present, future: [] };
}

/** A new present; the oldest entries fall off past `cap`; redo is gone. The same value again is no entry. */
export function pushHistory<T>(h: History<T>, next: T, cap = HISTORY_CAP): History<T> {
  if (next === h.present) return h;
  const past = [...h.past, h.present];
  return { past: past.length > cap ? past.slice(past.length - cap) : past, present: next, future: [] };
}

/** Replaces the present without an entry (a node being dragged: the drag's end is the entry). */
export function replacePresent<T>(h: History<T>, next: T): History<T> {
  return { ...h, present: next };
}

export function undo<T>(h: History<T>): History<T> {
  const prev = h.past.at(-1);
  if (prev === undefined) return h;
  return { past: h.past.slice(0, -1), present: prev, future: [h.present, ...h.future] };
}

export function redo<T>(h: History<T>): History<T> {
  const next = h.future[0];
  if (next === undefined) return h;
  return { past: [...h.past, h.present], present: next, future: h.future.slice(1) };
}

// ---------------------------------------------------------------------------------------
// Problems

export interface DraftProblems {
  /** Every problem, workflow-level first. */
  all: WorkflowProblem[];
  /** Problems of the workflow itself (name, deadline). */
  workflow: WorkflowProblem[];
  byStep: Map<string, WorkflowProblem[]>;
}

/**
 * The draft checked as the server would (the WorkflowInput schema, then the graph rules), each
 * problem pinned to its step. `context.original` and `context.locked`: a locked step must stay
 * as saved; `context.self`: a step may not reference its own workflow.
 */
export function draftProblems(doc: EditorDoc, context: { locked?: Locked; original?: Record<string, StepDraft> } = {}): DraftProblems {
  const all: WorkflowProblem[] = [];
  const seen = new Set<string>();
  const add = (p: WorkflowProblem) => {
    const key = `${p.step}\u0000${p.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    all.push(p);
  };
  if (doc.name === "") add({ step: null, path: "metadata.name", message: "name: give the workflow a name" });
  const r = WorkflowInput.safeParse(toInput(doc));
  if (!r.success) {
    for (const issue of r.error.issues) {
      const path = issue.path.map(String);
      if (doc.name === "" && path.join(".") === "metadata.name") continue;
      const keys = issue.code === "unrecognized_keys" ? ` (${issue.keys.join(", ")})` : "";
      if (path[0] === "spec" && path[1] === "steps" && path[2] !== undefined) {
        const within = path.slice(3).join(".");
        add({ step: path[2], path: path.join("."), message: `${within ? `${within}: ` : ""}${issue.message}${keys}` });
      } else {
        const field = path.join(".").replace(/^metadata\.name$/, "name").replace(/^spec\./, "");
        add({ step: null, path: path.join("."), message: `${field ? `${field}: ` : ""}${issue.message}${keys}` });
      }
    }
  }
  for (const p of validateWorkflowGraph(doc.steps)) add(p);
  for (const [name, s] of Object.entries(doc.steps)) {
    if (s.externalRef && s.externalRef.name === doc.name) add({ step: name, path: `spec.steps.${name}.externalRef`, message: `step "${name}" references its own workflow` });
    if (context.locked?.has(name) && context.original && !sameStep(context.original[name], s)) {
      add({ step: name, path: `spec.steps.${name}`, message: `step "${name}" has started: it must stay as saved (undo the change)` });
    }
  }
  if (context.locked && context.original) {
    for (const name of context.locked) if (name in context.original && !(name in doc.steps)) add({ step: null, path: `spec.steps.${name}`, message: `step "${name}" has started: it cannot be removed` });
  }
  const byStep = new Map<string, WorkflowProblem[]>();
  for (const p of all) if (p.step !== null) (byStep.get(p.step) ?? byStep.set(p.step, []).get(p.step)!).push(p);
  return { all: [...all.filter((p) => p.step === null), ...all.filter((p) => p.step !== null)], workflow: all.filter((p) => p.step === null), byStep };
}

export { stableJson };

/** The same step once the schema's defaults are in (as the server compares a started step before it refuses a change with 409). */
export function sameStep(a: StepDraft | undefined, b: StepDraft | undefined): boolean {
  const norm = (s: StepDraft | undefined) => {
    const r = WorkflowStep.safeParse(s);
    return stableJson(r.success ? r.data : s);
  };
  return norm(a) === norm(b);
}

/** The same Workflow object once the schema's defaults are in: nothing to save. */
export function sameWorkflow(a: EditorDoc, b: EditorDoc): boolean {
  const norm = (d: EditorDoc) => {
    const r = WorkflowInput.safeParse(toInput(d));
    return stableJson(r.success ? { metadata: r.data.metadata, spec: r.data.spec } : toInput(d));
  };
  return norm(a) === norm(b);
}

// ---------------------------------------------------------------------------------------
// Targets as the side panel edits them: a selector in its text form

/** A LabelSelector object as selector text ("site=lab,env in (dev,test)"). */
export function selectorText(selector: LabelSelectorObject | undefined): string {
  return formatSelector(selectorRequirements(selector));
}

/** Selector text as the object form the spec holds; throws SelectorError. `a!=b` becomes NotIn. */
export function selectorObject(text: string): LabelSelectorObject {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<LabelSelectorObject["matchExpressions"]> = [];
  for (const r of parseSelector(text)) {
    if (r.op === "=") {
      if (r.key in matchLabels) throw new SelectorError(`label "${r.key}" given twice`);
      matchLabels[r.key] = r.values[0];
    } else if (r.op === "!=" || r.op === "notin") matchExpressions.push({ key: r.key, operator: "NotIn", values: r.values });
    else if (r.op === "in") matchExpressions.push({ key: r.key, operator: "In", values: r.values });
    else if (r.op === "exists") matchExpressions.push({ key: r.key, operator: "Exists" });
    else matchExpressions.push({ key: r.key, operator: "DoesNotExist" });
  }
  return { ...(Object.keys(matchLabels).length ? { matchLabels } : {}), ...(matchExpressions.length ? { matchExpressions } : {}) };
}

/** Device names typed as a list ("a, b c"). */
export function deviceList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}
