/**
 * The workflow editor's rules, pure: one row per rule the canvas applies as it is drawn
 * (connect refusals with their reason, rename, paste, delete with locked steps, history,
 * YAML round trip, problems pinned to steps).
 */
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import {
  addStep,
  canConnect,
  connect,
  copySteps,
  deleteEdges,
  deleteSteps,
  draftProblems,
  edgesOf,
  emptyDoc,
  freeSpot,
  freshName,
  fromYaml,
  historyOf,
  placeMissing,
  pasteSteps,
  pushHistory,
  redo,
  renameStep,
  sameStep,
  sameWorkflow,
  replacePresent,
  selectorObject,
  selectorText,
  toInput,
  toYaml,
  undo,
  updateStep,
  type EditorDoc,
  type StepDraft,
} from "./workflow-editor";
import { WorkflowInput } from "./workflow-spec";

const job = (dependencies?: string[], extra: Partial<StepDraft> = {}): StepDraft => ({
  ...(dependencies ? { dependencies } : {}),
  jobTemplate: { kind: "noop", args: {}, targets: { devices: ["d1"] } },
  ...extra,
});

function doc(steps: Record<string, StepDraft>, name = "w"): EditorDoc {
  const positions = Object.fromEntries(Object.keys(steps).map((n, i) => [n, { x: i * 100, y: 0 }]));
  return { ...emptyDoc(name), steps, positions };
}

const diamond = () => doc({ a: job(), b: job(["a"]), c: job(["a"]), d: job(["b", "c"]) });

describe("connect", () => {
  const rows: [string, EditorDoc, string, string, string | null][] = [
    ["self-loop refused", diamond(), "a", "a", "refused: dependency cycle a->a (a step cannot depend on itself)"],
    ["cycle refused with its path (from the dependent)", diamond(), "d", "a", "refused: dependency cycle a->d->b->a"],
    ["two-step cycle refused", doc({ a: job(), b: job(["a"]) }), "b", "a", "refused: dependency cycle a->b->a"],
    ["duplicate refused", diamond(), "a", "b", "refused: b already depends on a"],
    ["unknown step refused", diamond(), "zz", "a", 'refused: no step named "zz"'],
    ["diamond allowed", doc({ a: job(), b: job(["a"]), c: job(["a"]), d: job(["b"]) }), "c", "d", null],
    ["a shortcut across the diamond allowed", diamond(), "a", "d", null],
  ];
  it.each(rows)("%s", (_, d, source, target, reason) => {
    const check = canConnect(d, source, target);
    expect(check.ok ? null : check.reason).toBe(reason);
  });

  it("a locked dependent cannot gain a dependency", () => {
    expect(canConnect(doc({ a: job(), b: job() }), "a", "b", new Set(["b"]))).toEqual({ ok: false, reason: "refused: step b has started, its dependencies cannot change" });
    // A locked step may still be the dependency of a new edge: it is its dependent that changes.
    expect(canConnect(doc({ a: job(), b: job() }), "a", "b", new Set(["a"]))).toEqual({ ok: true });
  });

  it("connect adds the dependency to the target; the edges follow the dependencies", () => {
    const r = connect(doc({ a: job(), b: job(), c: job(["b"]) }), "a", "c");
    expect(r.ok && r.doc.steps.c?.dependencies).toEqual(["b", "a"]);
    expect(r.ok && edgesOf(r.doc).map((e) => e.id)).toEqual(["b->c", "a->c"]);
    const bad = connect(diamond(), "d", "a");
    expect(bad.ok).toBe(false);
  });

  it("deleting an edge removes the dependency; not into a locked step", () => {
    const r = deleteEdges(diamond(), [{ source: "b", target: "d" }]);
    expect(r.ok && r.doc.steps.d?.dependencies).toEqual(["c"]);
    const last = deleteEdges(doc({ a: job(), b: job(["a"]) }), [{ source: "a", target: "b" }]);
    expect(last.ok && "dependencies" in last.doc.steps.b!).toBe(false);
    expect(deleteEdges(diamond(), [{ source: "b", target: "d" }], new Set(["d"])).ok).toBe(false);
  });
});

describe("steps", () => {
  it("rename keeps the dependencies on it, their `when` and the positions, in the same order", () => {
    const d = doc({ a: job(), b: job(["a"]), c: job(["a", "b"], { when: "a.Succeeded && !b.Failed" }) });
    const r = renameStep(d, "a", "alpha");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.keys(r.doc.steps)).toEqual(["alpha", "b", "c"]);
    expect(r.doc.steps.b?.dependencies).toEqual(["alpha"]);
    expect(r.doc.steps.c?.dependencies).toEqual(["alpha", "b"]);
    expect(r.doc.steps.c?.when).toBe("alpha.Succeeded && !b.Failed");
    expect(r.doc.positions.alpha).toEqual(d.positions.a);
    expect(draftProblems(r.doc).all).toEqual([]);
  });

  it.each([
    ["a name taken", "b", 'a step named "b" already exists'],
    ["a bad name", "1x", 'step name "1x": letters, digits and \'-\', starting with a letter'],
  ])("rename refuses %s", (_, to, reason) => {
    expect(renameStep(doc({ a: job(), b: job() }), "a", to)).toEqual({ ok: false, reason });
  });

  it("a `when` term is renamed whole: b, not bb or b-2", () => {
    const r = renameStep(doc({ b: job(), bb: job(), "b-2": job(), c: job(["b", "bb", "b-2"], { when: "b && bb && b-2.Failed" }) }), "b", "x");
    expect(r.ok && r.doc.steps.c?.when).toBe("x && bb && b-2.Failed");
  });

  it("locked steps: not renamed, not changed, not deleted, nor a step they depend on", () => {
    const locked = new Set(["a"]);
    expect(renameStep(diamond(), "a", "z", locked)).toEqual({ ok: false, reason: "refused: step a has started, it cannot be renamed" });
    expect(updateStep(diamond(), "a", job(), locked)).toEqual({ ok: false, reason: "refused: step a has started, it cannot be changed" });
    expect(deleteSteps(diamond(), ["a"], locked)).toEqual({ ok: false, reason: "refused: step a has started, it cannot be deleted" });
    expect(deleteSteps(diamond(), ["a"], new Set(["b"]))).toEqual({ ok: false, reason: "refused: step b has started and depends on a" });
    expect(renameStep(diamond(), "a", "z", new Set(["b"]))).toEqual({ ok: false, reason: "refused: step b has started and depends on a" });
  });

  it("delete removes the steps and the dependencies on them", () => {
    const r = deleteSteps(diamond(), ["b"]);
    expect(r.ok && Object.keys(r.doc.steps)).toEqual(["a", "c", "d"]);
    expect(r.ok && r.doc.steps.d?.dependencies).toEqual(["c"]);
    expect(r.ok && "b" in r.doc.positions).toBe(false);
  });

  it("new steps from the palette get fresh names; a new job names its missing targets", () => {
    let d = emptyDoc("w");
    d = addStep(d, { type: "job", kind: "noop" }, { x: 0, y: 0 }).doc;
    const second = addStep(d, { type: "job", kind: "noop" }, { x: 10, y: 0 });
    expect(second.name).toBe("noop-2");
    const ref = addStep(second.doc, { type: "reference", workflow: "2fa-rotate" }, { x: 0, y: 0 });
    expect(ref.name).toBe("run-2fa-rotate");
    expect(ref.doc.steps[ref.name]).toEqual({ externalRef: { kind: "Workflow", name: "2fa-rotate" } });
    expect(draftProblems(ref.doc).byStep.get("noop")?.map((p) => p.message)).toEqual(["jobTemplate.targets: give exactly one of devices or selector"]);
    expect(freshName("a-2", new Set(["a-2", "a-3"]))).toBe("a-4");
  });

  it("a clicked palette item lands on a free spot, below the steps in its way", () => {
    const size = { width: 100, height: 50 };
    expect(freeSpot({}, { x: 5, y: 5 }, size)).toEqual({ x: 5, y: 5 });
    expect(freeSpot({ a: { x: 0, y: 0 }, b: { x: 10, y: 66 }, far: { x: 500, y: 0 } }, { x: 5, y: 5 }, size)).toEqual({ x: 5, y: 132 });
  });
});

describe("copy and paste", () => {
  it("pasted steps get fresh names; edges inside the selection are kept, edges from outside are not", () => {
    const d = diamond();
    const clip = copySteps(d, ["b", "d"]);
    expect(clip.steps.b?.dependencies).toBeUndefined();
    expect(clip.steps.d?.dependencies).toEqual(["b"]);
    const { doc: pasted, names } = pasteSteps(d, clip, { x: 40, y: 40 });
    expect(names).toEqual(["b-2", "d-2"]);
    expect(pasted.steps["d-2"]?.dependencies).toEqual(["b-2"]);
    expect(pasted.steps["b-2"]?.dependencies).toBeUndefined();
    expect(pasted.positions["d-2"]).toEqual({ x: d.positions.d!.x + 40, y: d.positions.d!.y + 40 });
    // The originals are untouched and the draft stays valid.
    expect(pasted.steps.d).toEqual(d.steps.d);
    expect(draftProblems(pasted).all).toEqual([]);
    // Pasting twice: fresh names again.
    expect(pasteSteps(pasted, clip).names).toEqual(["b-3", "d-3"]);
  });

  it("a pasted `when` names the pasted dependencies", () => {
    const d = doc({ a: job(), b: job(["a"], { when: "a.Succeeded" }) });
    const { doc: pasted } = pasteSteps(d, copySteps(d, ["a", "b"]));
    expect(pasted.steps["b-2"]).toMatchObject({ dependencies: ["a-2"], when: "a-2.Succeeded" });
  });
});

describe("history", () => {
  it("undo and redo walk the entries; a new entry drops the redo; the past is capped", () => {
    let h = historyOf(1);
    h = pushHistory(h, 2);
    h = pushHistory(h, 3);
    h = undo(h);
    expect(h.present).toBe(2);
    h = undo(h);
    expect(h.present).toBe(1);
    expect(undo(h)).toBe(h);
    h = redo(h);
    expect(h.present).toBe(2);
    h = pushHistory(h, 4);
    expect(h.future).toEqual([]);
    expect(redo(h)).toBe(h);
    expect(undo(h).present).toBe(2);
    // A drag replaces the present; only its end is an entry.
    expect(replacePresent(h, 5)).toEqual({ past: [1, 2], present: 5, future: [] });
    let big = historyOf(0);
    for (let i = 1; i <= 10; i++) big = pushHistory(big, i, 3);
    expect(big.past).toEqual([7, 8, 9]);
  });
});

describe("YAML", () => {
  const full = {
    apiVersion: "drover/v1",
    kind: "Workflow",
    metadata: { name: "nightly", labels: { team: "ops" } },
    spec: {
      schedule: { cron: "0 3 * * *", timezone: "Europe/Rome", suspend: true },
      activeDeadlineSeconds: 3600,
      failFast: false,
      steps: {
        backup: { jobTemplate: { kind: "exec", args: { cmd: "backup.sh" }, targets: { selector: { matchLabels: { site: "lab" }, matchExpressions: [{ key: "env", operator: "In", values: ["dev", "test"] }] } }, requireApproval: true } },
        drain: {
          dependencies: ["backup"],
          jobTemplate: { kind: "noop", args: {}, targets: { devices: ["d1", "d2"] } },
          retryStrategy: { limit: 3, backoff: { duration: "5s", factor: 2, maxDuration: "1m" } },
        },
        cleanup: { dependencies: ["backup", "drain"], when: "backup.Succeeded && drain.Failed", externalRef: { kind: "Workflow", name: "cleanup" } },
      },
    },
  };

  it("round-trips losslessly: when, retryStrategy, selector, externalRef, schedule", () => {
    const first = fromYaml(YAML.stringify(full));
    expect(first.problems).toEqual([]);
    expect(toInput(first.doc!)).toEqual(full);
    const again = fromYaml(toYaml(first.doc!), first.doc!);
    expect(toInput(again.doc!)).toEqual(full);
    // Positions of known steps are kept across a YAML edit.
    expect(again.doc!.positions).toEqual(first.doc!.positions);
    expect(WorkflowInput.safeParse(toInput(again.doc!)).success).toBe(true);
  });

  it("invalid YAML: problems at their lines, no document", () => {
    const syntax = fromYaml("metadata:\n  name: w\nspec: [\n");
    expect(syntax.doc).toBeNull();
    expect(syntax.problems[0]?.line).not.toBeNull();
    const cycle = fromYaml("metadata:\n  name: w\nspec:\n  steps:\n    a:\n      dependencies: [b]\n      externalRef: {kind: Workflow, name: x}\n    b:\n      dependencies: [a]\n      externalRef: {kind: Workflow, name: x}\n");
    expect(cycle.doc).toBeNull();
    expect(cycle.problems).toEqual([{ line: 6, path: "spec.steps.a.dependencies", message: "dependency cycle: a->b->a" }]);
    const schema = fromYaml("metadata:\n  name: w\nspec:\n  steps:\n    a:\n      bogus: 1\n      externalRef: {kind: Workflow, name: x}\n");
    expect(schema.problems.map((p) => p.line)).toEqual([6]);
  });

  it("steps new in the YAML are laid out; known ones keep their place unless a new one needs room", () => {
    const layout = (steps: Record<string, StepDraft>) => new Map(Object.keys(steps).map((n, i) => [n, { x: i * 10, y: 5 }]));
    const d = doc({ a: job(), b: job(["a"]) });
    expect(placeMissing(d, layout)).toBe(d);
    const added = fromYaml(toYaml(d).replace("steps:\n", "steps:\n    z:\n      externalRef: {kind: Workflow, name: x}\n"), d);
    expect(Object.keys(added.doc!.positions)).toEqual(["a", "b"]);
    expect(placeMissing(added.doc!, layout).positions).toEqual({ z: { x: 0, y: 5 }, a: { x: 10, y: 5 }, b: { x: 20, y: 5 } });
  });
});

describe("problems", () => {
  it("pinned to their steps; workflow-level ones apart", () => {
    const d = { ...doc({ a: job(["a"]), b: job(undefined, { when: "a" }), c: { jobTemplate: { kind: "noop", targets: { devices: ["x"] } }, retryStrategy: { limit: -1 } } }), name: "Bad Name" };
    const p = draftProblems(d);
    expect(p.workflow.map((x) => x.message)).toEqual(["name: lowercase letters, digits and '-', starting and ending alphanumeric"]);
    expect(p.byStep.get("a")?.map((x) => x.message)).toEqual(["dependency cycle: a->a"]);
    expect(p.byStep.get("b")?.map((x) => x.message)).toEqual(['when of step "b" names "a", which is not one of its dependencies']);
    expect(p.byStep.get("c")?.map((x) => x.message)).toEqual(["retryStrategy.limit: Too small: expected number to be >=0"]);
  });

  it("an empty workflow, a self-reference, and a locked step changed or removed", () => {
    expect(draftProblems(emptyDoc("w")).all.map((x) => x.message)).toEqual(["steps: at least one step"]);
    expect(draftProblems(doc({ a: job() }, "")).workflow.map((x) => x.message)).toEqual(["name: give the workflow a name"]);
    expect(draftProblems(doc({ a: { externalRef: { kind: "Workflow", name: "w" } } })).byStep.get("a")?.map((x) => x.message)).toEqual(['step "a" references its own workflow']);
    const original = { a: job(), b: job(["a"]) };
    const changed = doc({ a: job(undefined, { when: "true" }) });
    const p = draftProblems(changed, { locked: new Set(["a", "b"]), original });
    expect(p.byStep.get("a")?.map((x) => x.message)).toEqual(['step "a" has started: it must stay as saved (undo the change)']);
    expect(p.workflow.map((x) => x.message)).toEqual(['step "b" has started: it cannot be removed']);
  });
});

describe("sameness", () => {
  it("a step or a workflow is the same once the schema's defaults are in, whatever the key order", () => {
    const written: StepDraft = { jobTemplate: { kind: "noop", targets: { devices: ["d1"] } }, retryStrategy: { limit: 1, backoff: { duration: "5s" } } };
    const stored: StepDraft = { retryStrategy: { backoff: { factor: 2, duration: "5s" }, limit: 1 }, jobTemplate: { args: {}, kind: "noop", targets: { devices: ["d1"] } } };
    expect(sameStep(written, stored)).toBe(true);
    expect(sameStep(written, { ...stored, when: "true" })).toBe(false);
    expect(sameWorkflow(doc({ a: written }), { ...doc({ a: stored }), failFast: true })).toBe(true);
    expect(sameWorkflow(doc({ a: written }), { ...doc({ a: stored }), failFast: false })).toBe(false);
    // A locked step written without its defaults is not a change.
    expect(draftProblems(doc({ a: written }), { locked: new Set(["a"]), original: { a: stored } }).all).toEqual([]);
  });
});

describe("targets", () => {
  it.each([
    ["site=lab", { matchLabels: { site: "lab" } }],
    ["site=lab,env in (dev,test),!legacy,gpu", { matchLabels: { site: "lab" }, matchExpressions: [{ key: "env", operator: "In", values: ["dev", "test"] }, { key: "legacy", operator: "DoesNotExist" }, { key: "gpu", operator: "Exists" }] }],
    ["tier!=db", { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] }],
  ])("selector %s as its object and back", (text, object) => {
    expect(selectorObject(text)).toEqual(object);
    expect(selectorObject(selectorText(selectorObject(text)))).toEqual(object);
  });

  it("a bad selector throws with the reason", () => {
    expect(() => selectorObject("env in (")).toThrow(/unbalanced/);
  });
});
