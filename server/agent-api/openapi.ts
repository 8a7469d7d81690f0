/** The agent protocol as OpenAPI, built from the same zod schemas the handlers use. */
import { z } from "zod";
import {
  ActionReport,
  AGENT_API_BASE,
  EnrollmentCreated,
  EnrollmentDecision,
  EnrollmentRequestBody,
  StatusReport,
  StatusResponse,
  WorkResponse,
} from "../../lib/protocol";
import { errorResponses, jsonContent } from "../lib/openapi";

let cached: Record<string, unknown> | null = null;

export function agentOpenApi(): Record<string, unknown> {
  cached ??= {
    openapi: "3.1.0",
    info: { title: "Drover agent protocol", version: "1" },
    servers: [{ url: AGENT_API_BASE }],
    components: { securitySchemes: { device: { type: "http", scheme: "bearer" } } },
    security: [{ device: [] }],
    paths: {
      "/enrollments": {
        post: {
          summary:
            "Ask to join the fleet (idempotent for the same deviceName and secret). The optional host facts (system) are kept with the request for the operator to check the machine before approving it, with the address it first came from; a repeat with the same secret updates the facts and the request's last-seen address and time. " +
            "With an enrollmentToken (an operator's, from the console's Add devices page or `drover create enrollment-token`), the token's labels go over the requested ones (the token wins), the request records the token, and a token made with autoApprove answers Approved at once; one use is counted with the request, and a repeat of the same request counts none. " +
            "A token the server does not know is 401 UNAUTHENTICATED; one that is revoked, expired or used up is 403 FORBIDDEN saying which; either way nothing is created and no use is counted, and asking again will not change it (the agent stops)",
          security: [],
          requestBody: { required: true, content: jsonContent(EnrollmentRequestBody, "input") },
          responses: { "201": { description: "Enrollment request", content: jsonContent(EnrollmentCreated) }, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
        },
      },
      "/enrollments/{id}": {
        get: {
          summary: "Wait up to `wait` seconds (max 60) for the decision; the token appears in the first answer after approval only",
          security: [],
          parameters: [
            { name: "id", in: "path", required: true, schema: { type: "string" } },
            { name: "wait", in: "query", schema: { type: "integer", minimum: 0, maximum: 60 } },
            { name: "X-Enrollment-Secret", in: "header", required: true, schema: { type: "string" } },
          ],
          responses: { "200": { description: "Decision", content: jsonContent(EnrollmentDecision) }, ...errorResponses(400, 401, 404, 429) },
        },
      },
      "/work": {
        get: {
          summary:
            "Long-poll for work: answers at once when there is some, else within 100 ms of it appearing, or after `wait` seconds. A device holds at most DROVER_MAX_POLLS_PER_DEVICE polls (a newer one answers the oldest at once with no work); past the server's budget of held polls, 429 with Retry-After",
          parameters: [
            { name: "specVersion", in: "query", schema: { type: "integer", minimum: 0 } },
            { name: "wait", in: "query", schema: { type: "integer", minimum: 0, maximum: 60 } },
          ],
          responses: { "200": { description: "Work", content: jsonContent(WorkResponse) }, ...errorResponses(400, 401, 403, 429) },
        },
      },
      "/actions/{id}": {
        put: {
          summary:
            "Report an action's state: PENDING_SCHEDULE → NEW → RUNNING → DONE | FAILED, or CANCELLED from NEW or RUNNING; the same state again is a no-op; an unknown id sent with kind records an agent-created action; where agent and server disagree about an id, the agent wins over an action it created itself, but an action created on the server side (by an operator, a plan, a workflow or a rollout) keeps its kind, args and approval record and can only be moved once offered: anything else is 409 and recorded. While the device is being decommissioned it may only finish or cancel what it holds (403 otherwise). Output while it runs: a RUNNING report with `output` on an action the server has RUNNING replaces its stored output with it (the whole output so far, cut to the same 64 KiB head-and-tail as the final one; send it at most once a second; retries are safe); on an ended action it changes nothing (the same state: a no-op 200; RUNNING: 409)",
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          requestBody: { required: true, content: jsonContent(ActionReport, "input") },
          responses: {
            "200": { description: "The action as the server now records it", content: jsonContent(z.object({ id: z.string(), kind: z.string(), state: z.string() }).loose()) },
            ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429),
          },
        },
      },
      "/status": {
        post: {
          summary: "Heartbeat: the device's status, its whole action queue, and (optional) what it runs: capabilities {kinds, exec: {allow}}",
          requestBody: { required: true, content: jsonContent(StatusReport, "input") },
          responses: { "200": { description: "Next heartbeat interval", content: jsonContent(StatusResponse) }, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
    },
  };
  return cached;
}
