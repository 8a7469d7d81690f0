/**
 * Applying a rendered spec.
 *
 * For now applying = persisting the spec and reporting its renderedVersion. The update
 * states of seed 003 (Preparing → ReadyToUpdate → ApplyingUpdate → [Rebooting] → Updated,
 * RollingBack → Error, with the lifecycle hooks) come later: a SpecApplier then reports
 * each state through `progress`, which the agent sends as conditions.updating.
 */
import type { RenderedSpec } from "../lib/protocol";
import type { REPORTED_UPDATE_STATES } from "../lib/device-status";
import { AppliedSpecDocument, type StateStore } from "./state";

export type ReportedUpdateState = (typeof REPORTED_UPDATE_STATES)[number];
export interface UpdateProgress {
  (state: ReportedUpdateState, info?: string): Promise<void>;
}

export interface SpecApplier {
  /** Brings the device to `spec`; resolves with the applied document, throws on failure. */
  apply(spec: RenderedSpec, progress: UpdateProgress): Promise<AppliedSpecDocument>;
}

/** Persists the spec as the applied one. */
export class PersistingSpecApplier implements SpecApplier {
  constructor(
    private readonly store: StateStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async apply(spec: RenderedSpec): Promise<AppliedSpecDocument> {
    const document: AppliedSpecDocument = {
      version: 1,
      renderedVersion: spec.renderedVersion,
      spec,
      appliedAt: this.now().toISOString(),
    };
    await this.store.write("spec", document);
    return document;
  }
}

export function readAppliedSpec(store: StateStore): Promise<AppliedSpecDocument | null> {
  return store.read("spec", AppliedSpecDocument);
}
