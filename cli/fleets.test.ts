/**
 * `drover apply -f` and `drover get fleets` against a real server:
 * created / configured / unchanged like kubectl, JSON, YAML (several documents, stdin), the
 * server's validation message, exit codes, and the object as read applied back unchanged.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { enrollDevice, uniqueName } from "../tests/helpers/devices";
import { createUser } from "../server/auth/auth";
import type { Device, Fleet } from "./types";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;

const { drover, ok, file } = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

const fleetYaml = (name: string, suite: string, version: string) => `apiVersion: drover/v1
kind: Fleet
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: {suite: ${suite}}
  template:
    spec:
      version: "${version}"
      applications:
        - name: web
          command: ["/usr/bin/web", "--port", "8080"]
`;

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-fleets-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("drover apply -f", () => {
  it("creates, then says unchanged, then configured when the template changes", async () => {
    const name = uniqueName("cli");
    const suite = uniqueName("suite");
    const f = file(`${name}.yaml`, fleetYaml(name, suite, "1.0.0"));
    expect(await ok(["apply", "-f", f])).toBe(`fleet/${name} created\n`);
    expect(await ok(["apply", "-f", f])).toBe(`fleet/${name} unchanged\n`);
    fs.writeFileSync(f, fleetYaml(name, suite, "1.1.0"));
    expect(await ok(["apply", "-f", f])).toBe(`fleet/${name} configured\n`);
    const versions = await s.api<{ items: { version: string }[] }>("GET", `/fleets/${name}/templateversions`);
    expect(versions.body.items.map((v) => v.version)).toEqual(["2", "1"]);
  });

  it("JSON files, several YAML documents, and stdin", async () => {
    const [a, b, c] = [uniqueName("cli"), uniqueName("cli"), uniqueName("cli")];
    const json = file(`${a}.json`, JSON.stringify(YAML.parse(fleetYaml(a, uniqueName("suite"), "1.0.0"))));
    expect(await ok(["apply", "-f", json])).toBe(`fleet/${a} created\n`);
    const multi = `${fleetYaml(b, uniqueName("suite"), "1.0.0")}---\n${fleetYaml(c, uniqueName("suite"), "1.0.0")}---\n`;
    expect(await ok(["apply", "-f", "-"], { input: multi })).toBe(`fleet/${b} created\nfleet/${c} created\n`);
    expect((await s.api("GET", `/fleets/${c}`)).status).toBe(200);
  });

  it("the server's message names a bad field; the other documents are still applied; exit 1", async () => {
    const bad = uniqueName("cli");
    const good = uniqueName("cli");
    const text = `${fleetYaml(bad, uniqueName("suite"), "1.0.0").replace("version:", "verison:")}---\n${fleetYaml(good, uniqueName("suite"), "1.0.0")}`;
    const r = await drover(["apply", "-f", file("mixed.yaml", text)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`fleet/${good} created\n`);
    expect(r.stderr).toContain(`error: fleet/${bad}: INVALID_REQUEST: `);
    expect(r.stderr).toContain('spec.template.spec: Unrecognized key: "verison"');
    expect(r.stderr).toContain("1 of 2 objects not applied");
    expect((await s.api("GET", `/fleets/${bad}`)).status).toBe(404);
  });

  it("usage errors exit 2: no such file, not YAML, not an object; another kind is refused (1)", async () => {
    expect((await drover(["apply", "-f", path.join(dir, "missing.yaml")])).stderr).toMatch(/cannot read .*missing\.yaml: no such file/);
    expect((await drover(["apply", "-f", path.join(dir, "missing.yaml")])).code).toBe(2);
    const broken = await drover(["apply", "-f", file("broken.yaml", "metadata: {name: x\n")]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/not valid YAML or JSON/);
    expect((await drover(["apply", "-f", file("list.yaml", "- 1\n")])).code).toBe(2);
    expect((await drover(["apply"])).code).toBe(2);
    const other = await drover(["apply", "-f", file("device.yaml", "kind: Device\nmetadata: {name: w}\n")]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/kind "Device" cannot be applied: only Fleet, Plan and Workflow objects/);
  });

  it("a viewer's apply is refused (exit 1) and creates nothing", async () => {
    await createUser(s.auth, s.ctx.db, { username: "cliviewer", password: "cliviewer-pass-1", role: "viewer" });
    const token = (await s.api<{ token: string }>("POST", "/auth/token", { username: "cliviewer", password: "cliviewer-pass-1" })).body.token;
    const name = uniqueName("cli");
    const r = await drover(["apply", "-f", file("viewer.yaml", fleetYaml(name, uniqueName("suite"), "1.0.0"))], { token });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/FORBIDDEN/);
    expect((await s.api("GET", `/fleets/${name}`)).status).toBe(404);
  });
});

describe("drover get fleets", () => {
  it("a table of fleets with their members; one fleet as YAML applies back unchanged", async () => {
    const name = uniqueName("cli");
    const suite = uniqueName("suite");
    await ok(["apply", "-f", file(`${name}.yaml`, fleetYaml(name, suite, "3.0.0"))]);
    const member = await enrollDevice(s, uniqueName("dev"), { suite });

    const table = (await ok(["get", "fleets"])).trimEnd().split("\n");
    expect(table[0]).toMatch(/^NAME\s+TEMPLATE\s+VERSION\s+DEVICES\s+UP-TO-DATE\s+UPDATING\s+OUT-OF-DATE\s+ROLLOUT\s+AGE\s+SELECTOR$/);
    expect(table.find((l) => l.startsWith(name + " "))).toMatch(new RegExp(`^${name}\\s+1\\s+3\\.0\\.0\\s+1\\s+0\\s+0\\s+0\\s+<none>\\s+\\d+s\\s+suite=${suite}$`));

    const list = JSON.parse(await ok(["get", "fleets", "-o", "json"])) as { items: Fleet[] };
    expect(list.items.some((f) => f.metadata.name === name)).toBe(true);
    const one = await ok(["get", "fleet", name, "-o", "yaml"]);
    expect(YAML.parse(one)).toMatchObject({ kind: "Fleet", metadata: { name }, status: { templateVersion: "1", devices: { total: 1 } } });
    expect(await ok(["apply", "-f", file("roundtrip.yaml", one)])).toBe(`fleet/${name} unchanged\n`);

    const members = JSON.parse(await ok(["get", "devices", "--fleet", name, "-o", "json"])) as { items: Device[] };
    expect(members.items.map((d) => [d.name, d.fleet])).toEqual([[member.name, name]]);
    const missing = await drover(["get", "fleet", "no-such-fleet"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
  });
});
