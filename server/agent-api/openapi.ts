/**
 * The agent protocol as OpenAPI, built from the same zod schemas the handlers use. Every route
 * of handler.ts with every status it answers; docs/agent-protocol.md says the same for people,
 * and tests/agent-protocol-doc.test.ts keeps the two in step.
 */
import { z } from "zod";
import {
  ActionReport,
  AGENT_API_BASE,
  CertificateRequestBody,
  CertificateResponse,
  EnrollmentCreated,
  EnrollmentDecision,
  EnrollmentRequestBody,
  ErrorBody,
  MAX_WAIT_SECONDS,
  StatusReport,
  StatusResponse,
  WorkResponse,
} from "../../lib/protocol";
import { jsonContent } from "../lib/openapi";

/** The answer to an action report: the action as the server now records it (AgentActionView). */
const RecordedAction = z.object({
  id: z.uuid(),
  kind: z.string(),
  args: z.record(z.string(), z.unknown()),
  origin: z.enum(["user", "plan", "workflow", "rollout", "agent"]),
  state: z.string(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** `GET /download/manifest` (server/agent-dist/artifact.ts manifestBody). */
const DownloadManifest = z.object({
  name: z.literal("drover-agent"),
  version: z.string(),
  file: z.string(),
  size: z.number().int().positive(),
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  platform: z.string().optional().describe("Present for a single executable (?platform=)"),
  node: z.string().optional().describe('">=20": the Node script, present when no platform was asked for'),
  url: z.string().describe("Where to download this very build, relative to the server: /api/agent/v1/download with ?version= and ?platform= as asked"),
});

const retryAfter = {
  "Retry-After": { description: "Seconds to wait before asking again", schema: { type: "integer", minimum: 1 } },
};

/** Error answers, each status with when it is given; 429 carries Retry-After. */
function errors(when: Record<number, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(when).map(([status, description]) => [
      status,
      { description, content: jsonContent(ErrorBody), ...(status === "429" ? { headers: retryAfter } : {}) },
    ]),
  );
}

const RATE_LIMITED_DEVICE = "RATE_LIMITED: the device's requests (work, status and action reports together) past 10 a second, bursts of 40";
const INVALID_BODY = "INVALID_REQUEST: the body is not JSON, is empty, or fails validation (the message names the field), or it has a \"__proto__\" key";
const TOO_LARGE = "TOO_LARGE: a body over 1 MiB (1,048,576 bytes); on a declared Content-Length the connection is closed after the answer";
const NOT_JSON = "UNSUPPORTED_MEDIA_TYPE: a body whose Content-Type is not application/json (or application/*+json); the connection is closed after the answer";
const UNAUTHENTICATED_DEVICE =
  "UNAUTHENTICATED: no client certificate and no `Authorization: Bearer <device token>`; a client certificate that is expired, not signed by the server's CA, names no device or another one, or is not the one last issued to its device; a token the server does not know, or any token while DROVER_DEVICE_TOKENS=refuse; or a credential revoked when its device was decommissioned";
const waitParameter = {
  name: "wait",
  in: "query",
  description: `Seconds to hold the request when there is nothing to answer yet (default 0: answer at once); values above ${MAX_WAIT_SECONDS} count as ${MAX_WAIT_SECONDS}`,
  schema: { type: "integer", minimum: 0, default: 0 },
};
const downloadParameters = [
  { name: "platform", in: "query", description: "os-arch (e.g. linux-amd64): that platform's single executable rather than the Node script", schema: { type: "string", pattern: "^[a-z0-9]+-[a-z0-9]+$" } },
  { name: "version", in: "query", description: "A build the server holds (agent upgrades) rather than the current one", schema: { type: "string", pattern: "^[0-9A-Za-z][0-9A-Za-z.+_-]*$", maxLength: 64 } },
];
const downloadHeaders = {
  ETag: { description: 'The file\'s sha256 in quotes; send it back as If-None-Match to get 304', schema: { type: "string" } },
  "X-Drover-Agent-Version": { description: "The build's version", schema: { type: "string" } },
  "X-Drover-Agent-Sha256": { description: "The file's sha256 (hex)", schema: { type: "string" } },
};
const downloadErrors = errors({
  400: "INVALID_REQUEST: platform is not os-arch, or version is not a version name",
  404: "NOT_FOUND: no build of that version on this server (the message names those it holds), no single executable for that platform, or no agent build at all",
  429: "RATE_LIMITED: downloads and manifests from one client address past 2 a second, bursts of 30",
});

function download(method: "get" | "head") {
  return {
    summary:
      method === "get"
        ? "The agent itself: the Node script (Node 20+), or with ?platform= a single executable; with ?version= a build the server holds rather than the current one"
        : "The same headers as GET /download, without the file",
    security: [],
    parameters: downloadParameters,
    responses: {
      "200": {
        description: "The file (HEAD: its headers only)",
        headers: downloadHeaders,
        content: {
          "text/javascript": { schema: { type: "string", description: "The Node script" } },
          "application/octet-stream": { schema: { type: "string", format: "binary", description: "A single executable (?platform=)" } },
        },
      },
      "304": { description: "If-None-Match names the file's ETag: the client has it already", headers: downloadHeaders },
      ...downloadErrors,
    },
  };
}

let cached: Record<string, unknown> | null = null;

export function agentOpenApi(): Record<string, unknown> {
  cached ??= {
    openapi: "3.1.0",
    info: {
      title: "Drover agent protocol",
      version: "1",
      description:
        "The contract between a device agent and the Drover server, written out for people in docs/agent-protocol.md. " +
        'Every error is JSON {"error": {"code", "message"}}. Before any route, any request may also meet the front door: ' +
        "413 TOO_LARGE (a body over 1 MiB), 415 UNSUPPORTED_MEDIA_TYPE (a body that is not JSON), 400 (a URL that cannot be parsed), " +
        "408 from Node (headers not in within 10 s, the request not within 30 s); an unknown route or method is 404 NOT_FOUND; a fault of the server is 500 INTERNAL; " +
        "while the server cannot reach its database, 503 UNAVAILABLE with Retry-After (1–3 s). " +
        "TLS (issue 23): a server with DROVER_TLS_CERT speaks only TLS on its port; a plain HTTP request to an API path there is 400 INVALID_REQUEST naming the https:// URL (a console page is redirected, 308). " +
        "A server with a CA of its own serves that CA's certificate at /ca.pem, outside this base path (GET or HEAD, rate-limited per address like the downloads, 404 NOT_FOUND when there is none); an agent pins it by the SHA-256 of its DER (--ca-fingerprint) and trusts it alone.",
    },
    servers: [{ url: AGENT_API_BASE }],
    components: {
      securitySchemes: {
        device: { type: "http", scheme: "bearer", description: "The device token from the enrollment decision; accepted while the server's DROVER_DEVICE_TOKENS=accept (the default for one release)" },
        deviceCertificate: {
          type: "mutualTLS",
          description:
            "The client certificate from the enrollment decision or POST /certificate (DROVER_TLS=auto or proxy servers), presented in the TLS handshake; it comes first when both are sent. " +
            "Behind a proxy that ends TLS (DROVER_TLS=proxy) the device presents it to the proxy, which forwards it in X-Client-Cert (DROVER_CLIENT_CERT_HEADER); " +
            "the server reads that header only from DROVER_TRUSTED_PROXIES and checks the certificate itself, and refuses (401) a request carrying it from any other address",
        },
      },
    },
    security: [{ deviceCertificate: [] }, { device: [] }],
    paths: {
      "/enrollments": {
        post: {
          summary:
            "Ask to join the fleet (idempotent for the same deviceName and secret). The optional host facts (system) are kept with the request for the operator to check the machine before approving it, with the address it first came from; a repeat with the same secret updates the facts and the request's last-seen address and time. " +
            "With an enrollmentToken (an operator's, from the console's Add devices page or `drover create enrollment-token`), the token's labels go over the requested ones (the token wins), the request records the token, and a token made with autoApprove answers Approved at once; one use is counted with the request, and a repeat of the same request counts none. " +
            "A token the server does not know is 401 UNAUTHENTICATED; one that is revoked, expired or used up is 403 FORBIDDEN saying which; either way nothing is created and no use is counted, and asking again will not change it (the agent stops). " +
            "With a csr (PKCS#10, PEM, for an EC P-256 or RSA key the device made and keeps; its subject is ignored, the server names the device) on a DROVER_TLS=auto server, the decision carries a client certificate instead of a token; a server with DROVER_DEVICE_TOKENS=refuse requires one",
          security: [],
          requestBody: { required: true, content: jsonContent(EnrollmentRequestBody, "input") },
          responses: {
            "201": { description: "The request, new or the same one again (same deviceName and secret): Pending, or Approved at once (an auto-approve rule or token), or its current status. Approved and its device not yet seen, it carries the credential (token, or certificate for a request with a csr), as GET /enrollments/{id} would", content: jsonContent(EnrollmentCreated) },
            ...errors({
              400: `${INVALID_BODY}; or the labels with the enrollment token's would be more than 64; or the csr does not parse or its signature does not verify, the server has no CA to sign it (not DROVER_TLS=auto or proxy), or there is no csr while DROVER_DEVICE_TOKENS=refuse`,
              401: "UNAUTHENTICATED: an enrollmentToken the server does not know",
              403: "FORBIDDEN: the enrollmentToken was revoked, has expired or is used up (the message says which)",
              409: "CONFLICT: the deviceName is already enrolled, or already pending with another secret",
              413: TOO_LARGE,
              415: NOT_JSON,
              429: "RATE_LIMITED: requests for one deviceName past 2 a second (bursts of 10); or the server already has DROVER_MAX_ENROLLMENTS_IN_FLIGHT (64) enrollments in flight, refused before the body is read (Retry-After 5–30 s); or a request that would stay Pending while its address has DROVER_ENROLLMENT_PENDING_PER_ADDRESS (50) Pending or the server DROVER_ENROLLMENT_PENDING_MAX (5,000) (Retry-After: 60)",
            }),
          },
        },
      },
      "/enrollments/{id}": {
        get: {
          summary: `Wait up to \`wait\` seconds (at most ${MAX_WAIT_SECONDS}) for the decision; after approval the answer carries the token (or, for a request with a csr, the certificate), the same one in every answer until the device is first seen (its first POST /status): an answer lost on its way costs nothing, ask again. A wait counts against the server's budget of held requests`,
          security: [],
          parameters: [
            { name: "id", in: "path", required: true, description: "enrollmentId from POST /enrollments", schema: { type: "string" } },
            waitParameter,
            { name: "X-Enrollment-Secret", in: "header", required: true, description: "The secret sent with POST /enrollments", schema: { type: "string" } },
          ],
          responses: {
            "200": { description: "Decision: Pending (still, after the wait), Denied, or Approved (with token, or certificate for a request with a csr, the first time only)", content: jsonContent(EnrollmentDecision) },
            ...errors({
              400: "INVALID_REQUEST: wait is not a whole number ≥ 0, or the id has a malformed %-escape",
              401: "UNAUTHENTICATED: no X-Enrollment-Secret header, or not this request's secret",
              404: "NOT_FOUND: no enrollment request with this id (the agent asks again with POST /enrollments)",
              429: "RATE_LIMITED: looks at one request past 2 a second (bursts of 10); or, with wait > 0, the server already holds DROVER_MAX_HELD_POLLS (15,000) waits and work polls (Retry-After 5–30 s)",
            }),
          },
        },
      },
      "/work": {
        get: {
          summary:
            "Long-poll for work: answers at once when there is some, else within 100 ms of it appearing, or after `wait` seconds with no work. A device holds at most DROVER_MAX_POLLS_PER_DEVICE (2) polls: a newer one answers the oldest at once with no work. Past the server's budget of held polls, 429 with Retry-After",
          parameters: [{ name: "specVersion", in: "query", description: "The renderedVersion the agent has taken (default 0): a newer spec is sent", schema: { type: "integer", minimum: 0, default: 0 } }, waitParameter],
          responses: {
            "200": { description: "Work, or {\"actions\": []} after the wait (or when a newer poll of the device took this one's place)", content: jsonContent(WorkResponse) },
            ...errors({
              400: "INVALID_REQUEST: specVersion or wait is not a whole number ≥ 0",
              401: UNAUTHENTICATED_DEVICE,
              429: `${RATE_LIMITED_DEVICE}; or, with wait > 0, the server already holds DROVER_MAX_HELD_POLLS (15,000) polls and enrollment waits (Retry-After 5–30 s)`,
            }),
          },
        },
      },
      "/actions/{id}": {
        put: {
          summary:
            "Report an action's state: PENDING_SCHEDULE → NEW → RUNNING → DONE | FAILED, or CANCELLED from NEW or RUNNING; the same state again is a no-op; an unknown id sent with kind records an agent-created action; where agent and server disagree about an id, the agent wins over an action it created itself, but an action created on the server side (by an operator, a plan, a workflow or a rollout) keeps its kind, args and approval record and can only be moved once offered: anything else is 409 and recorded. While the device is being decommissioned it may only finish or cancel what it holds (403 otherwise). Output while it runs: a RUNNING report with `output` on an action the server has RUNNING replaces its stored output with it (the whole output so far, cut to the same 64 KiB head-and-tail as the final one; send it at most once a second; retries are safe); on an ended action it changes nothing (the same state: a no-op 200; RUNNING: 409)",
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          requestBody: { required: true, content: jsonContent(ActionReport, "input") },
          responses: {
            "200": { description: "The action as the server now records it", content: jsonContent(RecordedAction) },
            ...errors({
              400: `${INVALID_BODY}; or the id is not a UUID`,
              401: UNAUTHENTICATED_DEVICE,
              403: "FORBIDDEN: the action belongs to another device; or the device is being decommissioned and the report is not about an action it holds (NEW or RUNNING)",
              404: "NOT_FOUND: no action with this id, and the report has no kind to record one the agent created",
              409: "CONFLICT: a move the state machine does not allow the agent (e.g. a report after LOST, RUNNING on an ended action); or, on an action created on the server side, another kind, other args, or an action never offered to this device (recorded as an ActionReportRefused event)",
              413: TOO_LARGE,
              415: NOT_JSON,
              429: RATE_LIMITED_DEVICE,
            }),
          },
        },
      },
      "/status": {
        post: {
          summary:
            "Heartbeat: the device's status, its whole action queue (NEW or RUNNING actions missing from it, not updated in the last 5 s, become LOST), and (optional) what it runs, capabilities {kinds, exec: {allow}}, and its host facts (system)",
          requestBody: { required: true, content: jsonContent(StatusReport, "input") },
          responses: {
            "200": { description: "Next heartbeat interval", content: jsonContent(StatusResponse) },
            ...errors({
              400: INVALID_BODY,
              401: UNAUTHENTICATED_DEVICE,
              413: TOO_LARGE,
              415: NOT_JSON,
              429: `${RATE_LIMITED_DEVICE}; or the server already has DROVER_MAX_HEARTBEATS_IN_FLIGHT (1,000) status reports in flight, refused before the body is read and not counted against the device (Retry-After 5–30 s)`,
            }),
          },
        },
      },
      "/certificate": {
        post: {
          summary:
            "A new client certificate (issue 23) for the key of `csr` (the same key or a new one), signed by the server's CA, valid DROVER_DEVICE_CERT_SECONDS (30 days) from now. The certificate the request came over stays accepted until the new one is first used (an answer lost on its way costs nothing: ask again over the old one); any other earlier one is refused. " +
            "Authenticated by the current certificate (or, while DROVER_DEVICE_TOKENS=accept, the device token: how an agent enrolled with a token moves over). An agent renews once less than a third of its certificate's lifetime is left",
          requestBody: { required: true, content: jsonContent(CertificateRequestBody, "input") },
          responses: {
            "200": { description: "The certificate (PEM) and its end", content: jsonContent(CertificateResponse) },
            ...errors({
              400: `${INVALID_BODY}; or the csr does not parse or its signature does not verify; or the server has no CA to sign it (not DROVER_TLS=auto or proxy)`,
              401: UNAUTHENTICATED_DEVICE,
              413: TOO_LARGE,
              415: NOT_JSON,
              429: RATE_LIMITED_DEVICE,
            }),
          },
        },
      },
      "/download": { get: download("get"), head: download("head") },
      "/download/manifest": {
        get: {
          summary: "What GET /download with the same query would send: version, size, sha256 and its url",
          security: [],
          parameters: downloadParameters,
          responses: { "200": { description: "The manifest", content: jsonContent(DownloadManifest) }, ...downloadErrors },
        },
      },
      "/openapi.json": {
        get: {
          summary: "This document",
          security: [],
          responses: { "200": { description: "The agent protocol as OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
    },
  };
  return cached;
}

