/**
 * docs/agent-protocol.md, the served agent OpenAPI document and the server, kept in step
 * (issue 20): every route served is documented with the same status codes and every documented
 * route is served; the error codes and their statuses are those of the code; every JSON
 * example parses and has the fields the OpenAPI schema gives; and a few of the document's
 * promises (415, 401, the 404 shape, 413, 429 with Retry-After, a newer poll answering the
 * oldest, the downloads) are sent to a real server, with the request examples themselves.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_API_BASE, ERROR_CODES } from "../lib/protocol";
import { HTTP_STATUS } from "../server/errors";
import { enrollDevice, type EnrolledDevice } from "./helpers/devices";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";

const DOC_PATH = path.resolve(import.meta.dirname, "../docs/agent-protocol.md");
const DOC = "docs/agent-protocol.md";
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

// ---------------------------------------------------------------------------------------
// Reading the markdown

interface Example {
  /** "request", or the status of an answer. */
  of: "request" | number;
  json: string;
  line: number;
}
interface DocRoute {
  key: string;
  line: number;
  /** Status → the code column ("—" for a success). */
  statuses: Map<number, string>;
  examples: Example[];
}
interface ParsedDoc {
  routes: Map<string, DocRoute>;
  /** The Errors section's table: code → status. */
  errorCodes: Map<string, number>;
  /** Every ```json block, wherever it is. */
  jsonBlocks: { json: string; line: number }[];
  problems: string[];
}

const STATUS_HEADER = /^\|\s*Status\s*\|\s*Code\s*\|\s*(When|Meaning)\s*\|\s*$/;
const STATUS_ROW = /^\|\s*(\d{3})\s*\|\s*([^|]*?)\s*\|/;

/**
 * One `### METHOD /path` heading per route; within its section (up to the next heading of
 * level 3 or less) a `| Status | Code | When |` table and examples introduced by
 * "Example request:" or "Example answer (NNN):" followed by a ```json block.
 */
function parseProtocolDoc(text: string): ParsedDoc {
  const lines = text.split("\n");
  const routes = new Map<string, DocRoute>();
  const errorCodes = new Map<string, number>();
  const jsonBlocks: ParsedDoc["jsonBlocks"] = [];
  const problems: string[] = [];
  let route: DocRoute | null = null;
  let section = "";
  let inStatusTable = false;
  let pendingExample: Example["of"] | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const n = i + 1;
    if (line.startsWith("```json")) {
      const start = n;
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) body.push(lines[i]!);
      const json = body.join("\n");
      jsonBlocks.push({ json, line: start });
      // Several blocks may follow one "Example answers (200):".
      if (route && pendingExample !== null) route.examples.push({ of: pendingExample, json, line: start });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      inStatusTable = false;
      pendingExample = null;
      if (heading[1]!.length > 3) continue;
      route = null;
      section = heading[2]!.trim();
      const m = /^(\S+)\s+(\/\S*)$/.exec(section);
      if (heading[1]!.length === 3 && m && (METHODS as readonly string[]).includes(m[1]!)) {
        const key = `${m[1]} ${m[2]}`;
        if (routes.has(key)) problems.push(`${DOC}:${n}: "${key}" has a second heading`);
        route = { key, line: n, statuses: new Map(), examples: [] };
        routes.set(key, route);
      } else if (heading[1]!.length === 3 && METHODS.some((method) => section.toUpperCase().startsWith(`${method} `))) {
        problems.push(`${DOC}:${n}: "${section}" looks like a route but is not "### METHOD /path"`);
      }
      continue;
    }
    if (STATUS_HEADER.test(line)) {
      inStatusTable = true;
      continue;
    }
    if (inStatusTable) {
      if (!line.startsWith("|")) {
        inStatusTable = false;
      } else {
        const row = STATUS_ROW.exec(line);
        if (!row) continue; // the |---| separator
        const status = Number(row[1]);
        const code = row[2]!.replaceAll("`", "").trim();
        if (route) {
          if (route.statuses.has(status)) problems.push(`${route.key}: ${DOC}:${n} lists ${status} twice`);
          route.statuses.set(status, code);
        } else if (section === "Errors") {
          errorCodes.set(code, status);
        }
        continue;
      }
    }
    if (line.trim() === "") continue;
    const example = /^Example (request|answers? \((\d{3})\))[^:]*:\s*$/.exec(line) ?? /^After the wait.*\((\d{3})\):\s*$/.exec(line);
    pendingExample = example ? (example[1] === "request" ? "request" : Number(example[2] ?? example[1])) : null;
  }
  return { routes, errorCodes, jsonBlocks, problems };
}

// ---------------------------------------------------------------------------------------
// Comparing with the served document

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}
interface OpenApiDoc {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}
interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
}

function servedRoutes(doc: OpenApiDoc): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if ((METHODS as readonly string[]).includes(method.toUpperCase())) out.set(`${method.toUpperCase()} ${p}`, op);
    }
  }
  return out;
}

/** Both ways: each difference as one line naming the route. */
function compareRoutes(served: Map<string, Operation>, documented: Map<string, DocRoute>): string[] {
  const problems: string[] = [];
  for (const [key, op] of served) {
    const route = documented.get(key);
    if (!route) {
      problems.push(`${key}: served in the OpenAPI document but has no "### ${key}" section in ${DOC}`);
      continue;
    }
    const inApi = Object.keys(op.responses).map(Number).sort((a, b) => a - b);
    const inDoc = [...route.statuses.keys()].sort((a, b) => a - b);
    const onlyApi = inApi.filter((s) => !route.statuses.has(s));
    const onlyDoc = inDoc.filter((s) => !inApi.includes(s));
    if (onlyApi.length) problems.push(`${key}: the OpenAPI document lists ${onlyApi.join(", ")}, ${DOC} (line ${route.line}) does not`);
    if (onlyDoc.length) problems.push(`${key}: ${DOC} (line ${route.line}) lists ${onlyDoc.join(", ")}, the OpenAPI document does not`);
    for (const [status, code] of route.statuses) {
      const expected = status >= 400 ? (Object.entries(HTTP_STATUS).find(([, s]) => s === status)?.[0] ?? "?") : "—";
      if (code !== expected) problems.push(`${key}: ${DOC} gives ${status} the code "${code}", the server's is "${expected}"`);
    }
  }
  for (const key of documented.keys()) {
    if (!served.has(key)) problems.push(`${key}: documented in ${DOC} but not in the served OpenAPI document`);
  }
  return problems;
}

/** The example's fields against the schema: none unknown, none required missing (recursively, where the schema has properties). */
function exampleProblems(value: unknown, schema: JsonSchema | undefined, where: string): string[] {
  if (!schema || value === null || typeof value !== "object") return [];
  if (Array.isArray(value)) return schema.items ? value.flatMap((v, i) => exampleProblems(v, schema.items, `${where}[${i}]`)) : [];
  if (!schema.properties) return [];
  const problems: string[] = [];
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(key in schema.properties)) problems.push(`${where}: "${key}" is not in the OpenAPI schema`);
    else problems.push(...exampleProblems(record[key], schema.properties[key], `${where}.${key}`));
  }
  for (const key of schema.required ?? []) if (!(key in record)) problems.push(`${where}: the required "${key}" is missing`);
  return problems;
}

// ---------------------------------------------------------------------------------------

const text = fs.readFileSync(DOC_PATH, "utf8");
const parsed = parseProtocolDoc(text);

let s: TestServer;
let served: OpenApiDoc;
let dist: string;
let currentSha = "";
const raw = (p: string, init: RequestInit = {}) => fetch(`${s.url}${AGENT_API_BASE}${p}`, init);
/** A request with a JSON body. */
const sending = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({ method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });

/** A DROVER_AGENT_DIST with a current build (1.1.0) and a kept one (1.0.0), so that nothing is built. */
function fakeDist(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-agent-dist-"));
  const write = (where: string, version: string) => {
    fs.mkdirSync(where, { recursive: true });
    const content = `// drover-agent ${version}\n`;
    fs.writeFileSync(path.join(where, "drover-agent.mjs"), content);
    const sha256 = createHash("sha256").update(content).digest("hex");
    fs.writeFileSync(path.join(where, "manifest.json"), JSON.stringify({ name: "drover-agent", version, file: "drover-agent.mjs", size: content.length, sha256, binaries: [] }));
    return sha256;
  };
  currentSha = write(dir, "1.1.0");
  write(path.join(dir, "versions", "1.0.0"), "1.0.0");
  return dir;
}

beforeAll(async () => {
  dist = fakeDist();
  s = await startTestServer({ DROVER_AGENT_DIST: dist });
  const res = await raw("/openapi.json");
  expect(res.status).toBe(200);
  served = (await res.json()) as OpenApiDoc;
});
afterAll(async () => {
  await s?.close();
  fs.rmSync(dist, { recursive: true, force: true });
});

// Once (SQLite): the markdown against the served document, neither of which depends on the database.
describe.skipIf(testOnPostgres)(`${DOC} and the served agent OpenAPI document`, () => {
  it("the markdown has the regular shape: one heading per route, a status table in each", () => {
    expect(parsed.problems).toEqual([]);
    expect(parsed.routes.size).toBeGreaterThan(0);
    const empty = [...parsed.routes.values()].filter((r) => r.statuses.size === 0).map((r) => `${r.key} (line ${r.line}) has no "| Status | Code | When |" table`);
    expect(empty).toEqual([]);
  });

  it("every served route is documented with the same status codes, and every documented route is served", () => {
    expect(served.servers[0]?.url).toBe(AGENT_API_BASE);
    expect(compareRoutes(servedRoutes(served), parsed.routes)).toEqual([]);
  });

  it("the comparison names the route and the difference (a doctored copy of the markdown)", () => {
    const doctored = parseProtocolDoc(text.replace(/^\| 429 \| `RATE_LIMITED` \| The device's requests over 10 a second \(bursts of 40\); or.*$/m, "").replace("### GET /openapi.json", "### GET /openapi.yaml"));
    const problems = compareRoutes(servedRoutes(served), doctored.routes);
    expect(problems).toEqual(
      expect.arrayContaining([
        `GET /work: the OpenAPI document lists 429, ${DOC} (line ${doctored.routes.get("GET /work")?.line}) does not`,
        `GET /openapi.json: served in the OpenAPI document but has no "### GET /openapi.json" section in ${DOC}`,
        `GET /openapi.yaml: documented in ${DOC} but not in the served OpenAPI document`,
      ]),
    );
  });

  it("the Errors table lists every error code with the status the server answers it with", () => {
    const expected = Object.fromEntries(ERROR_CODES.map((code) => [code, HTTP_STATUS[code]]));
    expect(Object.fromEntries(parsed.errorCodes)).toEqual(expected);
  });

  it("every JSON example parses and has the fields of its route's OpenAPI schema", () => {
    const problems: string[] = [];
    for (const block of parsed.jsonBlocks) {
      try {
        JSON.parse(block.json);
      } catch (error) {
        problems.push(`${DOC}:${block.line}: not JSON: ${(error as Error).message}`);
      }
    }
    const routes = servedRoutes(served);
    for (const route of parsed.routes.values()) {
      const op = routes.get(route.key);
      for (const ex of route.examples) {
        const schema = ex.of === "request" ? op?.requestBody?.content["application/json"]?.schema : op?.responses[String(ex.of)]?.content?.["application/json"]?.schema;
        if (!schema) {
          problems.push(`${route.key}: ${DOC}:${ex.line} is an example of ${ex.of === "request" ? "a request body" : `a ${ex.of} answer`} the OpenAPI document has no JSON schema for`);
          continue;
        }
        try {
          problems.push(...exampleProblems(JSON.parse(ex.json), schema, `${route.key} ${ex.of === "request" ? "request" : ex.of} example (${DOC}:${ex.line})`));
        } catch {
          // reported above
        }
      }
    }
    expect(problems).toEqual([]);
    // The examples that the live checks below send are there.
    for (const key of ["POST /enrollments", "PUT /actions/{id}", "POST /status"]) expect(parsed.routes.get(key)?.examples.some((e) => e.of === "request"), key).toBe(true);
  });
});

describe(`what ${DOC} promises, against a real server`, () => {
  // Once (SQLite): what is answered before any query (415, 401 without credentials, 404, 413), by
  // the server's own memory (429: its per-device limit, tests/agent-api's on both) or from files
  // (downloads). The examples the server stores, and the long-poll, run on both databases.
  const once = it.skipIf(testOnPostgres);
  const example = (key: string, of: Example["of"] = "request") => {
    const found = parsed.routes.get(key)?.examples.find((e) => e.of === of);
    if (!found) throw new Error(`${key}: no ${of} example in ${DOC}`);
    return JSON.parse(found.json) as Record<string, unknown>;
  };
  let device: EnrolledDevice;
  beforeAll(async () => {
    device = await enrollDevice(s);
  });

  once("415 for a text/plain body, before authentication, and the connection is closed", async () => {
    const res = await raw("/status", { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" });
    expect(res.status).toBe(415);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual({ error: { code: "UNSUPPORTED_MEDIA_TYPE", message: "body: Content-Type must be application/json (got text/plain)" } });
  });

  once("401 without a token on the device routes; 401 without the enrollment secret", async () => {
    for (const [p, init] of [
      ["/work", {}],
      ["/status", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      ["/actions/3c9a7e51-8b2d-4f6a-9c1e-5d4b3a2f1e0d", { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" }],
      ["/enrollments/whatever", {}],
    ] as const) {
      const res = await raw(p, init);
      expect(res.status, p).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code, p).toBe("UNAUTHENTICATED");
    }
  });

  once("404 in the error shape for a path or a method that is not a route", async () => {
    for (const [method, p] of [
      ["GET", "/nope"],
      ["POST", "/work"],
      ["DELETE", "/actions/3c9a7e51-8b2d-4f6a-9c1e-5d4b3a2f1e0d"],
    ]) {
      const res = await raw(p!, { method: method! });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: { code: "NOT_FOUND", message: `${method} ${AGENT_API_BASE}${p} not found` } });
    }
  });

  once("413 for a declared body over 1 MiB", async () => {
    const res = await raw("/status", { method: "POST", headers: { ...device.auth, "content-type": "application/json" }, body: `"${"x".repeat(1024 * 1024)}"` });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("TOO_LARGE");
  });

  it("the enrollment example is accepted (201), idempotent, and its decision needs its secret", async () => {
    const body = example("POST /enrollments");
    const first = await raw("/enrollments", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(first.status).toBe(201);
    const created = (await first.json()) as { enrollmentId: string; status: string };
    expect(Object.keys(created).sort()).toEqual(Object.keys(example("POST /enrollments", 201)).sort());
    expect(created.status).toBe("Pending");
    const again = await raw("/enrollments", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(created);
    const other = await raw("/enrollments", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, secret: "A".repeat(43) }) });
    expect(other.status).toBe(409);
    const wrong = await raw(`/enrollments/${created.enrollmentId}`, { headers: { "x-enrollment-secret": "not-it" } });
    expect(wrong.status).toBe(401);
    const decision = await raw(`/enrollments/${created.enrollmentId}?wait=0`, { headers: { "x-enrollment-secret": body.secret as string } });
    expect(decision.status).toBe(200);
    expect(await decision.json()).toEqual(example("GET /enrollments/{id}", 200));
    expect((await raw("/enrollments/no-such-request", { headers: { "x-enrollment-secret": "x" } })).status).toBe(404);
  });

  it("the heartbeat example is accepted (200 {heartbeatSeconds})", async () => {
    const res = await raw("/status", sending("POST", example("POST /status"), device.auth));
    expect(res.status).toBe(200);
    expect(Object.keys((await res.json()) as object)).toEqual(Object.keys(example("POST /status", 200)));
  });

  it("the action report example records an agent-created action; the same again is a no-op; NEW after RUNNING is 409", async () => {
    const documented = example("PUT /actions/{id}", 200);
    const id = documented.id as string;
    const put = (body: unknown) => raw(`/actions/${id}`, sending("PUT", body, device.auth));
    const res = await put(example("PUT /actions/{id}"));
    expect(res.status).toBe(200);
    const recorded = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(recorded).sort()).toEqual(Object.keys(documented).sort());
    expect({ ...recorded, createdAt: "", updatedAt: "" }).toEqual({ ...documented, createdAt: "", updatedAt: "" });
    expect((await put({ state: "RUNNING" })).status).toBe(200);
    const refused = await put({ state: "NEW" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("CONFLICT");
    expect((await raw("/actions/not-a-uuid", sending("PUT", { state: "NEW" }, device.auth))).status).toBe(400);
  });

  it("long-poll: wait=0 answers at once with no work; a third held poll of a device answers the oldest with {actions: []}", async () => {
    const other = await enrollDevice(s);
    const now = await raw("/work?wait=0", { headers: other.auth });
    expect(await now.json()).toEqual({ actions: [] });
    expect(parsed.routes.get("GET /work")?.examples.map((e) => JSON.parse(e.json) as unknown)).toContainEqual({ actions: [] });
    const abort = new AbortController();
    const started = Date.now();
    const first = raw("/work?wait=20", { headers: other.auth, signal: abort.signal }).then(async (r) => ({ status: r.status, body: await r.json(), after: Date.now() - started }));
    // The first is held before the second and third arrive.
    await new Promise((r) => setTimeout(r, 300));
    const second = raw("/work?wait=20", { headers: other.auth, signal: abort.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const third = raw("/work?wait=20", { headers: other.auth, signal: abort.signal }).catch(() => undefined);
    const answered = await first;
    expect(answered).toMatchObject({ status: 200, body: { actions: [] } });
    expect(answered.after).toBeLessThan(10_000);
    abort.abort();
    await Promise.all([second, third]);
  });

  once("429 with a whole-number Retry-After past a device's burst of 40 requests", async () => {
    const busy = await enrollDevice(s);
    const answers = await Promise.all(Array.from({ length: 200 }, () => raw("/work?wait=0", { headers: busy.auth }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.json() }))));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const a of limited) {
      expect((a.body as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(a.retryAfter))).toBe(true);
    }
  });

  once("downloads: the manifest and its url, a kept version, HEAD, 304 on the ETag, 404 and 400", async () => {
    const manifest = (await (await raw("/download/manifest")).json()) as Record<string, unknown>;
    expect(Object.keys(manifest).sort()).toEqual(Object.keys(example("GET /download/manifest", 200)).sort());
    expect(manifest).toMatchObject({ name: "drover-agent", version: "1.1.0", sha256: currentSha, node: ">=20", url: `${AGENT_API_BASE}/download` });
    const kept = (await (await raw("/download/manifest?version=1.0.0")).json()) as { url: string; version: string };
    expect(kept).toMatchObject({ version: "1.0.0", url: `${AGENT_API_BASE}/download?version=1.0.0` });
    const file = await fetch(`${s.url}${kept.url}`);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("// drover-agent 1.0.0\n");
    const head = await raw("/download", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-drover-agent-version")).toBe("1.1.0");
    expect(head.headers.get("x-drover-agent-sha256")).toBe(currentSha);
    expect((await raw("/download", { headers: { "if-none-match": `"${currentSha}"` } })).status).toBe(304);
    expect((await raw("/download/manifest?version=9.9.9")).status).toBe(404);
    expect((await raw("/download?platform=linux-amd64")).status).toBe(404);
    expect((await raw("/download/manifest?version=..")).status).toBe(400);
  });
});
