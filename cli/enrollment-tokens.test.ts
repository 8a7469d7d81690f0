/**
 * `drover create enrollment-token`, `drover get enrollment-tokens`, `drover revoke
 * enrollment-token` against a real server (issue 12): the token printed
 * once with its install command, listed without it, revoked; bad options are usage errors.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { tokenFor } from "../tests/helpers/actions";
import { cliRunner } from "./test-support";
import { parseExpiresIn } from "./commands/enrollment-tokens";

let s: TestServer;
let dir: string;
const cli = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-enrollment-tokens-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it("creates a token (printed once, with the install command), lists it without the secret, revokes it", async () => {
  const text = await cli.ok(["create", "enrollment-token", "--name", "lab racks", "--label", "site=lab", "-l", "env=dev", "--expires-in", "24h", "--max-uses", "3", "--auto-approve"]);
  const token = /^token: (drvt_\S+)$/m.exec(text)?.[1] ?? "";
  expect(token).toMatch(/^drvt_[A-Za-z0-9_-]{43}$/);
  expect(text).toContain(`install: curl -fsSL ${s.url}/install.sh | sudo sh -s -- --token ${token}`);
  const row = await s.ctx.db.enrollmentToken.findFirstOrThrow({ where: { name: "lab racks" } });
  expect(row).toMatchObject({ maxUses: 3, autoApprove: true, labels: JSON.stringify({ site: "lab", env: "dev" }) });
  expect(row.expiresAt!.getTime() - Date.now()).toBeGreaterThan(23 * 3600_000);

  const list = await cli.ok(["get", "enrollment-tokens"]);
  expect(list).toMatch(/ID\s+NAME\s+PREFIX\s+LABELS\s+USES\s+EXPIRES\s+AUTO-APPROVE\s+STATUS\s+AGE/);
  expect(list).toContain("lab racks");
  expect(list).toContain("env=dev,site=lab");
  expect(list).toContain("0/3");
  expect(list).toContain(`${row.prefix}…`);
  expect(list).not.toContain(token);
  const json = JSON.parse(await cli.ok(["get", "enrollment-token", row.id, "-o", "json"])) as { status: string; token?: string };
  expect(json.status).toBe("Active");
  expect(json.token).toBeUndefined();

  expect(await cli.ok(["revoke", "enrollment-token", row.id])).toBe(`enrollment-token/${row.id} revoked (lab racks, 0 uses)\n`);
  expect(await cli.ok(["revoke", "enrollment-token", row.id])).toContain("revoked");
  expect(await cli.ok(["get", "enrollment-tokens", row.id])).toContain("Revoked");
});

it("bad options are usage errors (2) before any request; a viewer is refused (1); an unknown id is NOT_FOUND", async () => {
  const before = await s.ctx.db.enrollmentToken.count();
  for (const args of [
    ["--label", "nokey"],
    ["--expires-in", "soon"],
    ["--max-uses", "0"],
  ]) {
    const run = await cli.drover(["create", "enrollment-token", ...args]);
    expect(run.code, args.join(" ")).toBe(2);
  }
  const viewer = await tokenFor(s, "viewer");
  const refused = await cli.drover(["create", "enrollment-token", "--name", "x"], { token: viewer.token });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/FORBIDDEN/);
  expect(await s.ctx.db.enrollmentToken.count()).toBe(before);
  const missing = await cli.drover(["revoke", "enrollment-token", "nope"]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/NOT_FOUND/);
});

it("--expires-in takes days too", () => {
  expect(parseExpiresIn("7d")).toBe(7 * 86_400);
  expect(parseExpiresIn("30m")).toBe(1800);
  expect(() => parseExpiresIn("1w")).toThrow(/not a duration/);
});
