/**
 * The agent protocol v1 (docs/agent-protocol.md) as zod schemas: one contract, used by
 * the server's handlers, the agent, the simulator and the OpenAPI document.
 */
import { z } from "zod";
import {
  APPLICATION_STATUSES,
  DECOMMISSIONING_STATES,
  REPORTED_UPDATE_STATES,
  RESOURCE_STATUSES,
} from "./device-status";
import { isValidLabelKey, isValidLabelValue } from "./label-selector";

export const AGENT_API_BASE = "/api/agent/v1";
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_WAIT_SECONDS = 60;

export const ERROR_CODES = [
  "INVALID_REQUEST",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "CONFLICT",
  "TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "RATE_LIMITED",
  "INTERNAL",
  "UNAVAILABLE",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ErrorBody = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string() }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const DeviceName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "lowercase letters, digits, '-' and '.', starting and ending alphanumeric");

/**
 * A JSON object read as a record. `JSON.parse` keeps a `"__proto__"` key as an own property,
 * and zod's record then drops it without a word (assigning it sets the prototype instead):
 * refuse it, so what was sent is what is stored.
 */
export function jsonRecord<V extends z.ZodType>(value: V) {
  const noProtoKey = z.custom<z.input<z.ZodRecord<z.ZodString, V>>>((input) => !(input !== null && typeof input === "object" && Object.hasOwn(input, "__proto__")), {
    message: 'the key "__proto__" is not allowed',
  });
  return noProtoKey.pipe(z.record(z.string(), value));
}

export const LabelsSchema = jsonRecord(z.string())
  .refine((l) => Object.keys(l).length <= 64, "at most 64 labels")
  .refine((l) => Object.keys(l).every(isValidLabelKey), "invalid label key")
  .refine((l) => Object.values(l).every(isValidLabelValue), "invalid label value");

export const PLATFORMS = ["linux-amd64", "linux-arm64", "linux-arm", "linux-riscv64", "windows-amd64", "darwin-arm64", "darwin-amd64"] as const;
export const Platform = z.string().regex(/^[a-z0-9]+-[a-z0-9]+$/, "os-arch, e.g. linux-amd64");
export const DeviceRole = z.enum(["controller", "worker"]);
export type DeviceRole = z.infer<typeof DeviceRole>;

/** 32+ random bytes, base64url: at least 43 characters. */
export const EnrollmentSecret = z.string().regex(/^[A-Za-z0-9_-]{43,256}$/, "32 or more random bytes, base64url");

/**
 * The device's host facts (issue 10: inventory), sent by the agent at enrollment and with its
 * heartbeats, so an operator can check a machine before approving it and see what it is
 * after. Every field is optional: an agent reports what it can read; an older agent sends
 * nothing. `usage` is the moment's numbers (bytes, percent), whose history the server keeps.
 */
export const SystemFacts = z.object({
  hostname: z.string().max(253).optional(),
  os: z.object({ name: z.string().max(128), version: z.string().max(128).optional() }).optional(),
  kernel: z.string().max(256).optional(),
  arch: z.string().max(32).optional(),
  /** The machine's addresses, loopback excluded. */
  ips: z.array(z.string().max(64)).max(64).optional(),
  /** RFC 3339 */
  bootTime: z.string().max(64).optional(),
  agent: z.object({ version: z.string().max(64), startedAt: z.string().max(64).optional() }).optional(),
  cpus: z.number().int().min(0).max(100_000).optional(),
  usage: z
    .object({
      cpuPercent: z.number().min(0).max(100).optional(),
      memory: z.object({ usedBytes: z.number().min(0), totalBytes: z.number().min(0) }).optional(),
      disk: z.object({ usedBytes: z.number().min(0), totalBytes: z.number().min(0) }).optional(),
    })
    .optional(),
});
export type SystemFacts = z.infer<typeof SystemFacts>;

export const EnrollmentRequestBody = z.object({
  deviceName: DeviceName,
  labels: LabelsSchema.default({}),
  platform: Platform,
  role: DeviceRole,
  agentVersion: z.string().min(1).max(64),
  secret: EnrollmentSecret,
  system: SystemFacts.optional(),
  enrollmentToken: z.string().max(256).optional(),
  /**
   * Issue 23: a PKCS#10 certificate signing request (PEM) for a key the device made and keeps;
   * on approval the decision carries `certificate`, signed by the server's CA, instead of `token`.
   */
  csr: z.string().min(1).max(8192).optional(),
});
export type EnrollmentRequestBody = z.infer<typeof EnrollmentRequestBody>;

export const ENROLLMENT_STATUSES = ["Pending", "Approved", "Denied"] as const;
export const EnrollmentStatus = z.enum(ENROLLMENT_STATUSES);
export type EnrollmentStatus = z.infer<typeof EnrollmentStatus>;

/** `token` or `certificate`: a new request approved at once carries its credential (as the decision would). */
export const EnrollmentCreated = z.object({ enrollmentId: z.string(), status: EnrollmentStatus, token: z.string().optional(), certificate: z.string().optional() });
export type EnrollmentCreated = z.infer<typeof EnrollmentCreated>;
export const EnrollmentDecision = z.object({ status: EnrollmentStatus, token: z.string().optional(), certificate: z.string().optional() });

/** `POST /certificate` (issue 23): a new certificate for a new (or the same) key, before the current one ends. */
export const CertificateRequestBody = z.object({ csr: z.string().min(1).max(8192) });
export const CertificateResponse = z.object({ certificate: z.string(), notAfter: z.string() });
export type CertificateResponse = z.infer<typeof CertificateResponse>;
export type EnrollmentDecision = z.infer<typeof EnrollmentDecision>;

export const WaitQuery = z.object({
  wait: z.coerce.number().int().min(0).default(0).transform((w) => Math.min(w, MAX_WAIT_SECONDS)),
});
export const WorkQuery = WaitQuery.extend({
  specVersion: z.coerce.number().int().min(0).default(0),
});

/** An absolute path without `..` segments: the agent writes it under its own root directory. */
export const ConfigFilePath = z
  .string()
  .min(2)
  .max(1024)
  .regex(/^\//, "an absolute path, e.g. /etc/app.conf")
  .refine((p) => !p.split("/").includes(".."), 'no ".." segments');

export const ConfigFile = z.strictObject({
  path: ConfigFilePath,
  content: z.string().max(256 * 1024),
  /** Octal file mode as a string, e.g. "0644". */
  mode: z.string().regex(/^0?[0-7]{3}$/, 'an octal mode such as "0644"').optional(),
});
export type ConfigFile = z.infer<typeof ConfigFile>;

export const ApplicationName = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "lowercase letters, digits and '-'");

/** An application the agent runs and supervises: argv (no shell) and its environment. */
export const ApplicationSpec = z.strictObject({
  name: ApplicationName,
  command: z.array(z.string().min(1)).min(1, "at least the program to run"),
  env: jsonRecord(z.string()).optional(),
});
export type ApplicationSpec = z.infer<typeof ApplicationSpec>;

export const SpecArtifact = z.strictObject({ url: z.url(), sha256: z.string().regex(/^[a-f0-9]{64}$/, "64 lowercase hex digits") });

/**
 * The device's whole rendered spec (AGENT_PROTOCOL.md `spec`): its fleet's template at the
 * version the rollout gave it, numbered by `renderedVersion`, which grows on every change.
 */
export const RenderedSpec = z.object({
  renderedVersion: z.number().int(),
  templateVersion: z.string(),
  version: z.string(),
  artifact: SpecArtifact.optional(),
  config: z.object({ files: z.array(ConfigFile).default([]) }).default({ files: [] }),
  applications: z.array(ApplicationSpec).default([]),
  hooks: jsonRecord(z.unknown()).default({}),
  /** The agent version the device should run (issue 12): the agent upgrades itself to it (agent/upgrade.ts). */
  agent: z.object({ version: z.string().min(1).max(64) }).optional(),
});
export type RenderedSpec = z.infer<typeof RenderedSpec>;

export const ActionKind = z.string().min(1).max(64).regex(/^[a-z][a-z0-9-]*$/, "lowercase kind, e.g. exec");
export const OfferedAction = z.object({
  id: z.uuid(),
  kind: ActionKind,
  args: jsonRecord(z.unknown()),
  createdAt: z.string(),
});
export type OfferedAction = z.infer<typeof OfferedAction>;

export const WorkResponse = z.object({
  spec: RenderedSpec.optional(),
  actions: z.array(OfferedAction),
  cancel: z.array(z.uuid()).optional(),
  decommission: z.literal(true).optional(),
  pollAfterSeconds: z.number().optional(),
});
export type WorkResponse = z.infer<typeof WorkResponse>;

export const AGENT_ACTION_STATES = ["NEW", "RUNNING", "DONE", "FAILED", "CANCELLED"] as const;
export const ActionReport = z.object({
  state: z.enum(AGENT_ACTION_STATES),
  output: z.string().max(256 * 1024).optional(),
  error: z.string().max(16 * 1024).optional(),
  kind: ActionKind.optional(),
  args: jsonRecord(z.unknown()).optional(),
});
export type ActionReport = z.infer<typeof ActionReport>;

/**
 * What the agent will run (issue 10): its action kinds and, for `exec`, its allow-list, sent
 * with every heartbeat so the console can warn before an action the device would refuse.
 * `exec` absent: exec runs any command (the simulator); present: only those, matched exactly.
 * The whole field absent: unknown (an older agent), and nothing is warned.
 */
export const AgentCapabilities = z.object({
  kinds: z.array(ActionKind).max(64),
  exec: z.object({ allow: z.array(z.string().min(1).max(4096)).max(256) }).optional(),
});
export type AgentCapabilities = z.infer<typeof AgentCapabilities>;

export const ResourceStatusSchema = z.enum(RESOURCE_STATUSES);
export const StatusReport = z.object({
  resources: z.object({ cpu: ResourceStatusSchema, memory: ResourceStatusSchema, disk: ResourceStatusSchema }),
  applications: z
    .array(z.object({ name: z.string().min(1).max(128), status: z.enum(APPLICATION_STATUSES), restarts: z.number().int().min(0) }))
    .max(256)
    .default([]),
  conditions: z
    .object({
      updating: z
        .object({ status: z.boolean(), reason: z.enum(REPORTED_UPDATE_STATES).optional(), info: z.string().max(4096).optional() })
        .optional(),
      rebooting: z.boolean().optional(),
    })
    .default({}),
  config: z.object({ renderedVersion: z.number().int().min(0) }),
  decommissioning: z
    .object({ state: z.enum(DECOMMISSIONING_STATES), info: z.string().max(4096).optional() })
    .optional(),
  actions: z.array(z.object({ id: z.uuid(), state: z.enum(AGENT_ACTION_STATES) })).max(1000).default([]),
  capabilities: AgentCapabilities.optional(),
  system: SystemFacts.optional(),
});
export type StatusReport = z.infer<typeof StatusReport>;
export const StatusResponse = z.object({ heartbeatSeconds: z.number().int().positive() });
export type StatusResponse = z.infer<typeof StatusResponse>;

/** "the message names the field": a zod error as one readable line. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join(".") : "body"}: ${i.message}`)
    .join("; ");
}
