import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ArtifactStore } from "./artifact";
import { UpdateFailure } from "./types";

const body = Buffer.from("the artifact's bytes\n".repeat(1000));
const sha = createHash("sha256").update(body).digest("hex");
let server: http.Server;
let base: string;
let hits: string[];
let dir: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const route = (req.url ?? "").split("?")[0];
    hits.push(route ?? "");
    if (route === "/app.tar") {
      res.writeHead(200, { "content-length": body.length });
      res.end(body);
    } else if (route === "/hang") {
      res.writeHead(200);
      res.write("x"); // and never ends
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(async () => {
  hits = [];
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "drover-artifact-"));
});

const store = (options: { timeoutMs?: number; maxBytes?: number } = {}) =>
  new ArtifactStore({ dir, timeoutMs: options.timeoutMs ?? 5_000, maxBytes: options.maxBytes ?? 10 * 1024 * 1024 });
const signal = () => new AbortController().signal;

describe("ArtifactStore", () => {
  it("downloads, checks the sha256, keeps it under its checksum, and reuses it", async () => {
    const file = await store().fetch({ url: `${base}/app.tar`, sha256: sha }, signal());
    expect(file).toBe(path.join(dir, sha));
    expect((await fs.readFile(file)).equals(body)).toBe(true);
    await store().fetch({ url: `${base}/app.tar`, sha256: sha }, signal());
    expect(hits).toEqual(["/app.tar"]);
  });

  it("a checksum mismatch fails and keeps nothing", async () => {
    const wrong = "0".repeat(64);
    const attempt = store().fetch({ url: `${base}/app.tar?token=secret`, sha256: wrong }, signal());
    await expect(attempt).rejects.toThrow(UpdateFailure);
    await expect(store().fetch({ url: `${base}/app.tar?token=secret`, sha256: wrong }, signal())).rejects.toThrow(
      new RegExp(`^artifact http://127\\.0\\.0\\.1:\\d+/app\\.tar: sha256 mismatch: expected 0{64}, got ${sha}$`),
    );
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it("a damaged copy on disk is downloaded again", async () => {
    await fs.writeFile(path.join(dir, sha), "tampered");
    await store().fetch({ url: `${base}/app.tar`, sha256: sha }, signal());
    expect(hits).toEqual(["/app.tar"]);
  });

  it("fails on an HTTP error, an unreachable host, a size over the limit and the timeout", async () => {
    await expect(store().fetch({ url: `${base}/missing`, sha256: sha }, signal())).rejects.toThrow(/download failed: HTTP 404/);
    await expect(store().fetch({ url: "http://127.0.0.1:1/x", sha256: sha }, signal())).rejects.toThrow(/download failed: fetch failed/);
    await expect(store({ maxBytes: 100 }).fetch({ url: `${base}/app.tar`, sha256: sha }, signal())).rejects.toThrow(/over the limit of 100/);
    await expect(store({ timeoutMs: 300 }).fetch({ url: `${base}/hang`, sha256: sha }, signal())).rejects.toThrow(/download failed: timed out after 0.3 s/);
    expect((await fs.readdir(dir)).filter((f) => f.endsWith(".part"))).toEqual([]);
  });

  it("prune keeps only the artifacts named", async () => {
    await store().fetch({ url: `${base}/app.tar`, sha256: sha }, signal());
    await fs.writeFile(path.join(dir, "a".repeat(64)), "old");
    await store().prune([{ url: `${base}/app.tar`, sha256: sha }, undefined]);
    expect(await fs.readdir(dir)).toEqual([sha]);
  });
});
