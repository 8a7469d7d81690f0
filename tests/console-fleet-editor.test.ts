/**
 * The console's fleet editor model (components/fleets/fleet-yaml.ts) and its live
 * invalidation rules (components/live/invalidation.ts): pure functions, plus the round trip
 * through a real server, since the YAML the editor shows must apply back unchanged (or every
 * Save of an untouched fleet would make a template version).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { startTestServer, type TestServer } from "./helpers/server";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { applyFormEdit, fleetToYaml, formFromValue, NEW_FLEET_YAML, parseFleetYaml } from "../components/fleets/fleet-yaml";
import { readRollout } from "../components/fleets/types";
import { settleDelayMs, targetId, targetsFor } from "../components/live/invalidation";

const EDITED = `apiVersion: drover/v1
kind: Fleet
metadata:
  name: edge # the fleet
spec:
  selector:
    matchLabels:
      site: lab
  template:
    spec:
      version: 1.0.0
      applications:
        - name: web
          command: [/usr/bin/web, --port, "8080"]
  # canary first
  rolloutPolicy:
    canary:
      replicas: 1
`;

describe("form edits written into the YAML", () => {
  it("keeps comments and untouched fields, and the form reads back what it wrote", () => {
    let text = applyFormEdit(EDITED, { field: "version", value: "2" });
    text = applyFormEdit(text, { field: "artifact", url: "https://example.com/a.tgz", sha256: "a".repeat(64) });
    text = applyFormEdit(text, { field: "matchLabels", entries: [{ key: "site", value: "lab" }, { key: "tier", value: "edge" }] });
    text = applyFormEdit(text, { field: "application", index: 0, command: "/usr/bin/web --port 9090" });
    expect(text).toContain("name: edge # the fleet");
    expect(text).toContain("# canary first");
    // A version that looks like a number stays a string.
    expect(text).toContain('version: "2"');
    const parsed = parseFleetYaml(text, "edge");
    expect(parsed.problems).toEqual([]);
    expect(parsed.input?.spec.template.spec.version).toBe("2");
    expect(parsed.input?.spec.rolloutPolicy?.canary?.replicas).toBe(1);
    expect(formFromValue(parsed.value)).toEqual({
      name: "edge",
      version: "2",
      artifactUrl: "https://example.com/a.tgz",
      artifactSha256: "a".repeat(64),
      applications: [{ name: "web", command: "/usr/bin/web --port 9090", editable: true }],
      matchLabels: [
        { key: "site", value: "lab" },
        { key: "tier", value: "edge" },
      ],
      unsupported: [],
    });
  });

  it("adds and removes applications; clearing both artifact fields removes the artifact", () => {
    let text = applyFormEdit(NEW_FLEET_YAML, { field: "addApplication" });
    text = applyFormEdit(text, { field: "application", index: 0, name: "agent", command: "/opt/agent" });
    text = applyFormEdit(text, { field: "addApplication" });
    expect(formFromValue(YAML.parse(text)).applications.map((a) => a.name)).toEqual(["agent", ""]);
    text = applyFormEdit(text, { field: "removeApplication", index: 1 });
    text = applyFormEdit(text, { field: "artifact", url: "https://x.test/a", sha256: "" });
    expect(YAML.parse(text).spec.template.spec.artifact).toEqual({ url: "https://x.test/a", sha256: "" });
    text = applyFormEdit(text, { field: "artifact", url: "", sha256: "" });
    const value = YAML.parse(text);
    expect(value.spec.template.spec.artifact).toBeUndefined();
    expect(value.spec.template.spec.applications).toEqual([{ name: "agent", command: ["/opt/agent"] }]);
    expect(parseFleetYaml(text).problems).toEqual([]);
  });

  it("an argument with spaces is left to the YAML; a YAML that does not parse is left alone", () => {
    const spaced = EDITED.replace('"8080"', '"a b"');
    expect(formFromValue(YAML.parse(spaced)).applications[0]?.editable).toBe(false);
    const broken = "spec: [\n";
    expect(applyFormEdit(broken, { field: "version", value: "1" })).toBe(broken);
  });
});

describe("validation before sending", () => {
  it("names the line and path of each problem, with the server schema's messages", () => {
    const text = EDITED.replace("version: 1.0.0", "version: 1.0.0\n      artifact:\n        url: not a url\n        sha256: xyz");
    const { problems, input } = parseFleetYaml(text, "edge");
    expect(input).toBeNull();
    expect(problems).toEqual([
      { line: 13, path: "spec.template.spec.artifact.url", message: expect.any(String) },
      { line: 14, path: "spec.template.spec.artifact.sha256", message: "64 lowercase hex digits" },
    ]);
  });

  it("refuses unknown fields, a syntax error with its line, and another fleet's name", () => {
    expect(parseFleetYaml(EDITED.replace("  # canary first", "  selectr: {}\n  # canary first"), "edge").problems).toEqual([
      { path: "spec", line: 15, message: expect.stringContaining("selectr") },
    ]);
    expect(parseFleetYaml("metadata:\n  name: [edge\n").problems[0]).toMatchObject({ path: null, line: expect.any(Number) });
    expect(parseFleetYaml(EDITED, "other").problems).toEqual([{ line: 4, path: "metadata.name", message: expect.stringContaining('this page edits fleet "other"') }]);
    expect(parseFleetYaml("", "edge").problems[0]?.message).toMatch(/empty/);
  });
});

describe("live invalidation", () => {
  it("fleet events refresh that fleet's page and the list; member moves refresh fleet status after the recount", () => {
    expect(targetsFor({ objectKind: "Fleet", objectName: "edge", type: "RolloutPhaseChanged" }).map(targetId)).toEqual(["events.list", "fleets.list", "fleet:edge"]);
    const moved = targetsFor({ objectKind: "Device", objectName: "d1", type: "UpdatedStatusChanged" });
    expect(moved.map(targetId)).toContain("fleets.status");
    expect(moved.filter((t) => settleDelayMs(t) > 0).map(targetId)).toEqual(["fleets.status"]);
    expect(targetsFor({ objectKind: "Device", objectName: "d1", type: "Nudged" }).map(targetId)).not.toContain("fleets.status");
  });
});

describe("the editor's YAML against a real server", () => {
  let s: TestServer;
  const callerFor = (s: TestServer, userId: string) =>
    createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId, username: "admin", role: "admin", via: "token" } });
  let caller: ReturnType<typeof callerFor>;
  beforeAll(async () => {
    s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
    const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
    caller = callerFor(s, admin.id);
  });
  afterAll(async () => {
    await s?.close();
  });

  it("applies back unchanged, and a version typed in the form makes the next template version", async () => {
    await caller.fleets.create({
      metadata: { name: "editor-rt", labels: { team: "ops" } },
      spec: {
        selector: { matchLabels: { site: "lab" }, matchExpressions: [{ key: "tier", operator: "In", values: ["edge"] }] },
        template: {
          spec: {
            version: "1.0.0",
            config: { files: [{ path: "/etc/app.conf", content: "a = 1\n", mode: "0644" }] },
            applications: [{ name: "web", command: ["/usr/bin/web"], env: { PORT: "80" } }],
          },
        },
        rolloutPolicy: { canary: { replicas: "10%", duration: "1m" }, deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 2 }] } },
      },
    });
    const fleet = await caller.fleets.get({ name: "editor-rt" });
    const shown = fleetToYaml(fleet);
    const parsed = parseFleetYaml(shown, "editor-rt");
    expect(parsed.problems).toEqual([]);
    const same = await caller.fleets.update({ name: "editor-rt", fleet: parsed.value });
    expect(same).toMatchObject({ changed: false, templateVersion: null });

    const edited = parseFleetYaml(applyFormEdit(shown, { field: "version", value: "1.1.0" }), "editor-rt");
    const saved = await caller.fleets.update({ name: "editor-rt", fleet: edited.value });
    expect(saved).toMatchObject({ changed: true, templateVersion: "2" });
    const [v2] = await caller.fleets.templateVersions({ name: "editor-rt" });
    expect(v2?.diff).toContain("-version: 1.0.0\n+version: 1.1.0");
    // The rollout it started reads as the console shows it.
    const rollout = readRollout(saved.fleet.status.rollout);
    expect(rollout).toMatchObject({ templateVersion: "2", previousVersion: "1" });
    // No member yet: no canary device; the batches are still listed as stages to come.
    expect(rollout?.progress?.map((p) => p.name)).toEqual(["batch 1", "final implicit batch"]);
  });
});
