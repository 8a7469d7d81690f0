/**
 * `drover approve enrollment ID --label k=v` (issue 10): the labels go on the device over the
 * ones it asked for; a malformed one is a usage error before any request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { enrollmentBody, newSecret, uniqueName } from "../tests/helpers/devices";
import { cliRunner } from "./test-support";

let s: TestServer;
const { drover, ok } = cliRunner(() => s);
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

async function pending(labels: Record<string, string>): Promise<{ id: string; name: string }> {
  const name = uniqueName("cli-label");
  const res = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, newSecret(), labels));
  expect(res.status).toBe(201);
  return { id: res.body.enrollmentId, name };
}

describe("approve enrollment --label", () => {
  it("puts the labels on the device, over the requested ones", async () => {
    const p = await pending({ site: "unknown", rack: "4" });
    expect(await ok(["approve", "enrollment", p.id, "--label", "site=lab", "-l", "owner=ops"])).toContain(`enrollment/${p.id} approved (device ${p.name})`);
    const device = await s.api<{ labels: Record<string, string> }>("GET", `/devices/${p.name}`);
    expect(device.body.labels).toEqual({ site: "lab", rack: "4", owner: "ops" });
  });

  it("several ids: every device gets them", async () => {
    const [a, b] = [await pending({}), await pending({})];
    await ok(["approve", "enrollments", a.id, b.id, "--label", "batch=7"]);
    for (const p of [a, b]) expect((await s.api<{ labels: Record<string, string> }>("GET", `/devices/${p.name}`)).body.labels).toEqual({ batch: "7" });
  });

  it("a malformed label is a usage error (2) and the request stays Pending", async () => {
    const p = await pending({});
    for (const bad of ["site", "bad key=x", "site=not ok!"]) {
      const r = await drover(["approve", "enrollment", p.id, "--label", bad]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("--label");
    }
    expect((await s.api<{ status: string }>("GET", `/enrollments/${p.id}`)).body.status).toBe("Pending");
  });
});
