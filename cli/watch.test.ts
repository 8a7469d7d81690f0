/**
 * The shared watch loop (cli/watch.ts) against a small real HTTP server that goes away and
 * comes back on the same port: it prints only changes, waits out the outage with one warning,
 * ends when the object does, and ends at once on a refusal.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { eventually } from "../tests/helpers/devices";
import { Api, ApiError } from "./http";
import { watchUntil } from "./watch";

interface Thing {
  v: number;
  done: boolean;
}

let answer: { status: number; body: unknown };
let served = 0;
let server: http.Server;
let port: number;
let warnings: string[];

function listen(at = 0): Promise<void> {
  server = http.createServer((_req, res) => {
    served++;
    res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
  });
  return new Promise((resolve) => server.listen(at, "127.0.0.1", () => resolve()));
}

function stop(): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

beforeEach(async () => {
  answer = { status: 200, body: { v: 1, done: false } };
  served = 0;
  await listen();
  port = (server.address() as AddressInfo).port;
  warnings = [];
  vi.spyOn(process.stderr, "write").mockImplementation((text) => {
    warnings.push(String(text));
    return true;
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  if (server.listening) await stop();
});

const watch = (printed: Thing[]) => {
  const api = new Api({ server: `http://127.0.0.1:${port}`, timeoutMs: 1_000 });
  return watchUntil<Thing>({
    first: { v: 1, done: false },
    interval: 20,
    signal: new AbortController().signal,
    get: (signal) => api.get<Thing>("/thing", undefined, signal),
    ended: (t) => t.done,
    key: (t) => JSON.stringify(t),
    print: (t) => printed.push(t),
  });
};

it("prints each change once, waits out a restart with one warning, and returns the object as it ended", async () => {
  const printed: Thing[] = [];
  const watching = watch(printed);
  await eventually(async () => (served >= 3 ? true : undefined));
  expect(printed).toEqual([]);

  answer = { status: 200, body: { v: 2, done: false } };
  await eventually(async () => (printed.length === 1 ? true : undefined));

  await stop();
  await eventually(async () => (warnings.length > 0 ? true : undefined));
  await new Promise((r) => setTimeout(r, 150)); // several more failed polls
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/^warning: cannot reach the server at .*; retrying\n$/);

  answer = { status: 200, body: { v: 3, done: true } };
  await listen(port);
  expect(await watching).toEqual({ v: 3, done: true });
  expect(printed).toEqual([
    { v: 2, done: false },
    { v: 3, done: true },
  ]);
  expect(warnings).toHaveLength(1);
});

it("ends at once when the server refuses (a 404 is not an outage)", async () => {
  answer = { status: 404, body: { error: { code: "NOT_FOUND", message: "no such thing" } } };
  await expect(watch([])).rejects.toBeInstanceOf(ApiError);
  expect(served).toBe(1);
  expect(warnings).toEqual([]);
});
