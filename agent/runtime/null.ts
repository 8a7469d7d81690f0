/** A device with nothing to change: every step succeeds at once, no applications. */
import type { DeviceRuntime } from "./types";

export class NullRuntime implements DeviceRuntime {
  async start(): Promise<void> {}
  async prepare(): Promise<void> {}
  async apply(): Promise<void> {}
  async activate(): Promise<void> {}
  async rollback(): Promise<void> {}
  async finish(): Promise<void> {}
  applications() {
    return [];
  }
  async stop(): Promise<void> {}
}
