/**
 * The operator API's objects as the CLI reads them (JSON: dates are ISO strings): the answers
 * typed by the generated operator-api.d.ts where the CLI reads one route's answer, and a few
 * narrower shapes that its printers share with tests and other callers.
 */
import type { Answer } from "./http";

export type Labels = Record<string, string>;

export interface Page<T> {
  items: T[];
  total?: number;
  nextCursor?: string | null;
}

export interface Device {
  name: string;
  /** The fleet that manages it (null: unmanaged). */
  fleet?: string | null;
  summary: string;
  updatedStatus: string;
  applicationSummary: string;
  lifecycle: string;
  lastSeen: string | null;
  labels: Labels;
  /** Issue 23: when its credential was revoked (by an operator, or at the end of its decommission). */
  credentialRevokedAt?: string | null;
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export interface LabelSelectorObject {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface Fleet {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; labels?: Labels; generation?: number; createdAt?: string };
  spec: { selector: LabelSelectorObject; template: { spec: { version: string } }; rolloutPolicy?: unknown };
  status: {
    templateVersion: string;
    conditions: Condition[];
    devices: { total: number; upToDate: number; updating: number; outOfDate: number; unknown: number };
    rollout: { phase?: string } | null;
  };
}

export interface Action {
  id: string;
  device: string;
  kind: string;
  state: string;
  origin: string;
  createdAt: string;
}

/** An operator's request over many devices (issue 10), decided as a unit. */
export type ActionRequest = Answer<"/requests">["items"][number];

export interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  labels: Labels;
  /** The address the request first came from, at firstSeenAt. */
  clientAddress: string | null;
  /** Issue 10 (optional: a server from before sends none of these). Labels the approving operator added over `labels`. */
  approvedLabels?: Labels | null;
  firstSeenAt?: string;
  lastSeenAt?: string;
  lastSeenAddress?: string | null;
  /** Host facts the agent sent (SystemFacts, lib/protocol.ts). */
  system?: Record<string, unknown> | null;
  createdAt: string;
}

export interface ApiToken {
  id: string;
  name: string | null;
  username: string;
  status: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  /** The token this request was made with. */
  current: boolean;
}

export type DroverEvent = Answer<"/events">["items"][number];

export type TokenResponse = Answer<"/auth/token", "post">;
