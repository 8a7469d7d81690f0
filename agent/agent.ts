/**
 * The Drover agent core: enroll, long-poll for work, run actions, heartbeat, decommission.
 *
 * One Agent is one device. The CLI (main.ts) runs one with a file state store and the
 * host's real resource readings; the simulator (simulate.ts) runs thousands in one process
 * with in-memory stores and synthetic health. Everything with a side effect comes in
 * through AgentOptions.
 *
 * Loops never die of one failed iteration (STYLE.md "The agent"): network errors, 5xx and
 * unexpected answers are logged and retried with exponential backoff and full jitter
 * (1 s → 30 s); 429 waits for Retry-After. Only a decision that retrying cannot change ends
 * the run: the credential revoked (401/403), the name taken (409 on enrollment), the
 * device decommissioned, or stop().
 */
import { X509Certificate } from "node:crypto";
import type { Logger } from "pino";
import type { DeviceRole, StatusReport, SystemFacts } from "../lib/protocol";
import { ActionQueue, type ActionStats } from "./actions";
import { InvalidResponseError, ProtocolClient, ProtocolError, TransportError } from "./client";
import { certificateRequest, newDeviceKey } from "./device-certificate";
import { builtinExecutors, capabilitiesOf, type ExecutorRegistry } from "./executors";
import type { HealthSource, Resources } from "./health";
import { randomBytes } from "./random";
import { NullRuntime } from "./runtime/null";
import type { DeviceRuntime } from "./runtime/types";
import { IdentityDocument, StateError, type AppliedSpecDocument, type StateStore } from "./state";
import type { StaticFacts, SystemFactsSource } from "./system-facts";
import { Backoff, HEARTBEAT_JITTER, isoTime, jittered, linkedSignal, sleep, Waker, type BackoffOptions } from "./timing";
import { Updater } from "./update";
import { UPGRADE_EXIT_STATUS } from "./upgrade";

export interface DeviceIdentity {
  name: string;
  labels: Record<string, string>;
  platform: string;
  role: DeviceRole;
  agentVersion: string;
}

export interface AgentTiming {
  /** `wait` of the enrollment decision long-poll (the protocol caps it at 60). */
  enrollWaitSeconds: number;
  /** `wait` of the work long-poll. */
  pollWaitSeconds: number;
  /** Backoff after network errors, 5xx and unexpected answers. */
  retry: Omit<BackoffOptions, "random">;
  /** Backoff between re-asks after an enrollment was denied. */
  denied: Omit<BackoffOptions, "random">;
  /**
   * Longest wait before polling again after an answer with actions or cancels (new ones,
   * or only ones this agent already holds): the server offers them until their reports
   * arrive, so the agent waits for its reports to get through rather than be handed the
   * same again at once.
   */
  heldWorkDelayMs: number;
  /** An empty answer faster than this means the server is not holding polls: back off. */
  fastAnswerMs: number;
  /**
   * ± share of jitter on each heartbeat interval (0 = exact). On by default (timing.ts
   * HEARTBEAT_JITTER): without it, a fleet that got a spec at the same moment heartbeats in
   * step from then on.
   */
  heartbeatJitter: number;
  /**
   * How long an update waits, after entering a state, for a heartbeat carrying it to be
   * answered (each state is sent at once either way). 0: do not wait; states that pass
   * quicker than a heartbeat round trip are then not all seen by the server.
   */
  updateStateReportMs: number;
}

export const DEFAULT_TIMING: AgentTiming = {
  enrollWaitSeconds: 30,
  pollWaitSeconds: 60,
  retry: { baseMs: 1_000, capMs: 30_000 },
  denied: { baseMs: 5_000, capMs: 5 * 60_000 },
  heldWorkDelayMs: 5_000,
  fastAnswerMs: 500,
  heartbeatJitter: HEARTBEAT_JITTER,
  updateStateReportMs: 2_000,
};

export type Applications = StatusReport["applications"];

export interface AgentOptions {
  identity: DeviceIdentity;
  client: ProtocolClient;
  store: StateStore;
  health: HealthSource;
  logger: Logger;
  timing?: Partial<AgentTiming>;
  /** The action kinds this agent runs; the built-in ones (no exec allowed, simulated reboot) by default. */
  executors?: ExecutorRegistry;
  /**
   * What applying a spec does to the device and which applications it reports: the host
   * (runtime/host.ts) for the agent process, a simulated one in the simulator; by default
   * nothing (no files, no applications).
   */
  runtime?: DeviceRuntime;
  /**
   * Host facts for the inventory (system-facts.ts), sent with the enrollment request and the
   * heartbeats; none by default (nothing is sent).
   */
  system?: SystemFactsSource;
  /** An enrollment token (issue 12), sent with the enrollment request; a refused one ends the run. */
  enrollmentToken?: string | undefined;
  /**
   * Issue 23: the device is identified by a client certificate (a key it makes, a CSR with its
   * enrollment request, renewed over itself) where the server signs them; this presents it on
   * new connections (http-transport.ts setClientCertificate). Absent: a bearer token only.
   */
  useClientCertificate?: ((credential: { cert: string; key: string }) => void) | undefined;
  now?: () => number;
  random?: () => number;
}

export type AgentOutcome =
  | { kind: "stopped" }
  | { kind: "decommissioned"; state: "Completed" | "Error"; info?: string }
  /** The state directory says this device was decommissioned before. */
  | { kind: "already-decommissioned" }
  | { kind: "revoked"; status: number; message: string }
  | { kind: "enrollment-conflict"; message: string }
  | { kind: "enrollment-rejected"; message: string }
  /** Approved, but the one answer that carried the token never reached the disk. */
  | { kind: "token-lost"; enrollmentId: string }
  | { kind: "state-error"; message: string }
  /** The agent replaced its own file (upgrade.ts): its service manager starts the new one. */
  | { kind: "restart"; info: string };

/** The server's 400 when it signs no device certificates (server/devices/certificates.ts NO_DEVICE_CA). */
const NO_DEVICE_CA = /signs no device certificates/;

/** How the CLI exits for each outcome. */
export function exitCodeFor(outcome: AgentOutcome): number {
  switch (outcome.kind) {
    case "stopped":
    case "decommissioned":
    case "already-decommissioned":
      return 0;
    case "restart":
      return UPGRADE_EXIT_STATUS;
    default:
      return 1;
  }
}

/**
 * The full facts go out again after this long even when unchanged: the server may have lost
 * them (a restore from backup), and it cannot ask.
 */
export const FACTS_REFRESH_MS = 60 * 60_000;

export type AgentPhase = "idle" | "enrolling" | "pending" | "denied" | "polling" | "decommissioning" | "done";

export interface AgentStats {
  enrollmentsRequested: number;
  polls: number;
  specsApplied: number;
  specsFailed: number;
  heartbeats: number;
  errors: number;
}

/** `told`: the delay is the server's Retry-After (429, 503), to be waited out whole. */
type Decision = { kind: "retry"; delayMs: number; told?: boolean } | { kind: "fatal"; outcome: AgentOutcome };

export class Agent {
  phase: AgentPhase = "idle";
  readonly stats: AgentStats = { enrollmentsRequested: 0, polls: 0, specsApplied: 0, specsFailed: 0, heartbeats: 0, errors: 0 };

  private readonly timing: AgentTiming;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: () => number;
  /** The action queue: journal, runner and reports (actions.ts). */
  private readonly actions: ActionQueue;
  /** Applies specs through seed 003's update states (update.ts). */
  private readonly updater: Updater;
  private readonly stopController = new AbortController();
  private readonly heartbeatWaker = new Waker();

  private identity: IdentityDocument | null = null;
  private running: Promise<AgentOutcome> | null = null;
  /** A fatal outcome found by the heartbeat loop, to end the poll loop with. */
  private fatal: AgentOutcome | null = null;
  private silentUntil = 0;
  private pollController: AbortController | null = null;
  /** The heartbeat on its way, if any: action reports wait for it (see actions.ts). */
  private heartbeatInFlight: Promise<void> | null = null;
  /** Heartbeat bodies built so far, and the number of the last one answered (or failed). */
  private heartbeatsBuilt = 0;
  private heartbeatsSettled = 0;
  private heartbeatWaiters: { want: number; resolve: () => void }[] = [];
  private heartbeatLoopRunning = false;
  /** Set by restartForUpgrade(): the run ends with the restart outcome rather than "stopped". */
  private restartInfo: string | null = null;

  /** The static facts the server last acknowledged, and when (see systemForHeartbeat). */
  private factsSent: { facts: StaticFacts; at: number } | null = null;

  /** What this agent runs, told to the server with every heartbeat (lib/protocol AgentCapabilities). */
  private readonly capabilities: StatusReport["capabilities"];

  constructor(private readonly options: AgentOptions) {
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    const executors = options.executors ?? builtinExecutors();
    this.capabilities = capabilitiesOf(executors);
    this.actions = new ActionQueue({
      store: options.store,
      client: options.client,
      token: () => this.token(),
      executors,
      logger: options.logger,
      retry: this.timing.retry,
      random: this.random,
      now: this.now,
      heartbeatSettled: () => this.heartbeatInFlight ?? Promise.resolve(),
      onConditionChange: () => this.heartbeatWaker.wake(),
    });
    this.updater = new Updater({
      store: options.store,
      runtime: options.runtime ?? new NullRuntime(),
      logger: options.logger,
      now: this.now,
      report: () => this.reportUpdateState(),
      onOutcome: (outcome) => {
        if (outcome === "Updated") this.stats.specsApplied++;
        else this.stats.specsFailed++;
      },
    });
  }

  /** Starts the agent in the background; resolves with how it ended. */
  start(): Promise<AgentOutcome> {
    this.running ??= this.run();
    return this.running;
  }

  /**
   * The agent's file was replaced by another version (upgrade.ts): stop as for a signal, and
   * end with the restart outcome (exit status 75) for the service manager to start the new one.
   */
  restartForUpgrade(info: string): void {
    this.restartInfo ??= info;
    this.stopController.abort();
  }

  /** Stops: aborts the long-poll in flight, lets state writes finish. */
  async stop(): Promise<AgentOutcome | null> {
    this.stopController.abort();
    return this.running ? await this.running : null;
  }

  get appliedVersion(): number {
    return this.updater.appliedVersion;
  }

  get appliedSpec(): AppliedSpecDocument | null {
    return this.updater.applied;
  }

  /** conditions.updating as the next heartbeat reports it. */
  get updatingCondition() {
    return this.updater.condition();
  }

  /** Resolves when no update is under way (tests). */
  updateIdle(): Promise<void> {
    return this.updater.idle();
  }

  get actionStats(): ActionStats {
    return this.actions.stats;
  }

  /** Whether the agent holds its credential: a token or a client certificate. */
  get hasToken(): boolean {
    return this.identity?.token !== undefined || this.identity?.certificate !== undefined;
  }

  get isSilent(): boolean {
    return this.now() < this.silentUntil;
  }

  /** Simulator: neither poll nor heartbeat for `ms` (the in-flight poll is dropped). */
  silence(ms: number): void {
    this.silentUntil = this.now() + ms;
    this.pollController?.abort();
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<AgentOutcome> {
    try {
      let outcome = await this.runPhases();
      if (this.restartInfo !== null && outcome.kind === "stopped") outcome = { kind: "restart", info: this.restartInfo };
      this.logOutcome(outcome);
      return outcome;
    } catch (error) {
      // Only state-store failures get here: everything on the network is retried.
      const outcome: AgentOutcome = { kind: "state-error", message: error instanceof Error ? error.message : String(error) };
      this.logOutcome(outcome);
      return outcome;
    } finally {
      this.phase = "done";
      await this.actions.stop().catch(() => undefined);
      // Interrupts an update under way (its journal resumes it at the next start) and
      // stops the applications.
      await this.updater.stop().catch((error: unknown) => this.log.error({ event: "update.stop-failed", error: errorInfo(error) }, "stopping the applications failed"));
    }
  }

  private async runPhases(): Promise<AgentOutcome> {
    const { identity: device, store } = this.options;
    let identity = await store.read("identity", IdentityDocument);
    if (identity && identity.deviceName !== device.name) {
      return {
        kind: "state-error",
        message: `the state directory belongs to device "${identity.deviceName}", not "${device.name}"`,
      };
    }
    if (identity?.decommissioned) return { kind: "already-decommissioned" };
    await this.updater.load();

    if (identity?.token === undefined && identity?.certificate === undefined) {
      const enrolled = await this.enroll(identity);
      if ("kind" in enrolled) return enrolled;
      identity = enrolled;
    } else {
      this.log.info({ event: "resumed", enrollmentId: identity.enrollmentId, renderedVersion: this.appliedVersion }, "resuming with the stored credential");
    }
    this.identity = identity;
    this.presentCertificate();
    // An agent enrolled with a token moves over to a certificate on its next start (issue 23).
    if (identity.certificate === undefined && this.options.useClientCertificate && !this.certificatesUnavailable) await this.renewCertificate("move-over");
    return this.operate();
  }

  // -------------------------------------------------------------------------------------
  // Enrollment

  private async enroll(existing: IdentityDocument | null): Promise<IdentityDocument | AgentOutcome> {
    const { identity: device, client } = this.options;
    const signal = this.stopController.signal;
    const retry = new Backoff({ ...this.timing.retry, random: this.random });
    const deniedBackoff = new Backoff({ ...this.timing.denied, random: this.random });
    let identity: IdentityDocument = existing ?? {
      version: 1,
      deviceName: device.name,
      decommissioning: false,
      decommissioned: false,
    };

    while (!this.stopped) {
      // The secret is on disk before it is ever sent: a crash after the POST re-sends the
      // same name and secret, which the server answers with the same request.
      let enrollment = identity.enrollment;
      if (!enrollment) {
        enrollment = { secret: await newSecret(), requestedAt: isoTime(this.now()), ...(this.wantsCertificate ? { key: newDeviceKey() } : {}) };
        identity = { ...identity, enrollment };
        await this.saveIdentity(identity);
      }

      if (enrollment.id === undefined) {
        this.phase = "enrolling";
        try {
          const created = await client.createEnrollment(
            {
              deviceName: device.name,
              labels: device.labels,
              platform: device.platform,
              role: device.role,
              agentVersion: device.agentVersion,
              secret: enrollment.secret,
              ...(enrollment.key && this.wantsCertificate ? { csr: certificateRequest(enrollment.key, device.name) } : {}),
              ...(this.options.enrollmentToken ? { enrollmentToken: this.options.enrollmentToken } : {}),
              ...(await this.enrollmentFacts()),
            },
            signal,
          );
          this.stats.enrollmentsRequested++;
          this.log.info({ event: "enrolled", enrollmentId: created.enrollmentId, status: created.status }, "enrollment requested");
          // Approved at once (a rule or an auto-approving token): the answer carries the credential.
          const approved = created.status === "Approved" ? this.approvedIdentity(created.enrollmentId, enrollment, created) : null;
          if (approved) {
            await this.saveIdentity(approved);
            this.log.info({ event: "approved", enrollmentId: created.enrollmentId }, "enrollment approved at once; credential stored");
            return approved;
          }
          identity = { ...identity, enrollment: { ...enrollment, id: created.enrollmentId } };
          await this.saveIdentity(identity);
          retry.reset();
        } catch (error) {
          if (this.stopped) break;
          if (error instanceof ProtocolError && error.status === 409) {
            return { kind: "enrollment-conflict", message: error.message };
          }
          // A server that signs no certificates (not DROVER_TLS=auto): enroll with a token instead.
          if (error instanceof ProtocolError && error.status === 400 && enrollment.key && NO_DEVICE_CA.test(error.message)) {
            this.certificatesUnavailable = true;
            this.log.info({ event: "certificate.unavailable" }, "the server signs no device certificates; enrolling for a token");
            continue;
          }
          // 401/403 here: the enrollment token was refused (unknown, revoked, expired, used up); asking again cannot change that.
          if (error instanceof ProtocolError && (error.status === 400 || error.status === 401 || error.status === 403 || error.status === 413)) {
            return { kind: "enrollment-rejected", message: error.message };
          }
          await this.retryAfter(error, retry, "enrollment request failed", signal);
        }
        continue;
      }

      this.phase = "pending";
      const started = this.now();
      try {
        const decision = await client.getEnrollment(enrollment.id, enrollment.secret, this.timing.enrollWaitSeconds, signal);
        retry.reset();
        if (decision.status === "Approved") {
          const approved = this.approvedIdentity(enrollment.id, enrollment, decision);
          if (!approved) return { kind: "token-lost", enrollmentId: enrollment.id };
          await this.saveIdentity(approved);
          this.log.info({ event: "approved", enrollmentId: enrollment.id }, "enrollment approved; credential stored");
          return approved;
        }
        if (decision.status === "Denied") {
          this.phase = "denied";
          const delayMs = deniedBackoff.next();
          this.log.warn({ event: "denied", enrollmentId: enrollment.id, retryInMs: delayMs }, "enrollment denied; asking again later");
          // A denial sticks: keep the same request and only look at it again, ever more
          // slowly. Asking with a new secret would put it back to Pending and undo the
          // operator's decision; re-provisioning (a fresh --state-dir) is how to ask anew.
          await sleep(delayMs, signal);
          continue;
        }
        // Pending (again, if an operator reopened a denial): a later denial starts its backoff afresh.
        deniedBackoff.reset();
        // Pending after the wait. A fast Pending means the server is not holding: slow down.
        if (this.now() - started < this.timing.fastAnswerMs) await sleep(retry.next(), signal);
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof ProtocolError && error.status === 404) {
          // The server no longer knows the request (e.g. a database reset): ask again.
          this.log.warn({ event: "enrollment.unknown", enrollmentId: enrollment.id }, "server does not know the enrollment request; requesting again");
          identity = { ...identity, enrollment: { secret: enrollment.secret, requestedAt: enrollment.requestedAt } };
          continue;
        }
        if (error instanceof ProtocolError && (error.status === 401 || error.status === 403)) {
          // The server does not accept our secret for this request: start over with a new one.
          this.log.warn({ event: "enrollment.secret-rejected", enrollmentId: enrollment.id, code: error.code }, "enrollment secret not accepted; requesting again");
          identity = { ...identity, enrollment: undefined };
          await sleep(retry.next(), signal);
          continue;
        }
        await this.retryAfter(error, retry, "waiting for enrollment decision failed", signal);
      }
    }
    return { kind: "stopped" };
  }

  /** The identity an approval's answer gives (its certificate for our key, or its token); null when it carries neither. */
  private approvedIdentity(enrollmentId: string, enrollment: { key?: string | undefined }, answer: { token?: string | undefined; certificate?: string | undefined }): IdentityDocument | null {
    const credential =
      answer.certificate !== undefined && enrollment.key
        ? { key: enrollment.key, certificate: answer.certificate, certificateReceivedAt: isoTime(this.now()) }
        : answer.token !== undefined
          ? { token: answer.token }
          : null;
    if (!credential) return null;
    return { version: 1, deviceName: this.options.identity.name, enrollmentId, ...credential, decommissioning: false, decommissioned: false };
  }

  // -------------------------------------------------------------------------------------
  // Operation: the work long-poll and the heartbeat, side by side

  private async operate(): Promise<AgentOutcome> {
    // The journal first: the first heartbeat must list the queue, or the server takes the
    // actions missing from it for LOST.
    await this.actions.start();
    // The running spec's applications, and an update a restart interrupted.
    await this.updater.start();
    this.phase = "polling";
    // `life` ends both loops: on stop(), or when the heartbeat finds the credential revoked.
    const life = new AbortController();
    const onStop = () => life.abort();
    // A stop that came while the journal and the applications were starting counts too.
    if (this.stopped) life.abort();
    this.stopController.signal.addEventListener("abort", onStop, { once: true });
    const heartbeat = new AbortController();
    const onLifeEnd = () => heartbeat.abort();
    life.signal.addEventListener("abort", onLifeEnd, { once: true });
    const heartbeats = this.heartbeatLoop(heartbeat.signal, life);
    const stopHeartbeats = async () => {
      heartbeat.abort();
      await heartbeats;
    };
    try {
      return await this.pollLoop(life.signal, stopHeartbeats);
    } finally {
      await stopHeartbeats();
      this.stopController.signal.removeEventListener("abort", onStop);
      life.signal.removeEventListener("abort", onLifeEnd);
    }
  }

  private async pollLoop(life: AbortSignal, stopHeartbeats: () => Promise<void>): Promise<AgentOutcome> {
    const token = this.token();
    const retry = new Backoff({ ...this.timing.retry, random: this.random });
    while (!life.aborted) {
      if (this.isSilent) {
        await sleep(this.silentUntil - this.now(), life);
        continue;
      }
      const controller = new AbortController();
      this.pollController = controller;
      const linked = linkedSignal([life, controller.signal]);
      const started = this.now();
      let work;
      try {
        this.stats.polls++;
        // Newer than any spec taken, the failed ones included: a spec that failed is not
        // retried (seed 003), the server renders a new version instead.
        work = await this.options.client.getWork(token, this.updater.knownVersion, this.timing.pollWaitSeconds, linked.signal);
      } catch (error) {
        if (life.aborted) break;
        if (controller.signal.aborted) continue; // silenced
        const decision = this.decide(error, retry);
        if (decision.kind === "fatal") return this.fatalOutcome(decision.outcome);
        this.stats.errors++;
        this.log.warn({ event: "poll.failed", error: errorInfo(error), retryInMs: decision.delayMs }, "work poll failed");
        await sleep(decision.delayMs, life);
        continue;
      } finally {
        linked.dispose();
        this.pollController = null;
      }

      if (work.decommission) return this.decommission(life, stopHeartbeats);

      let tookWork = false;
      // The update runs beside the poll: actions, cancels and a decommission still arrive.
      if (work.spec && this.updater.offer(work.spec)) tookWork = true;
      const offered = work.actions.length > 0 || (work.cancel?.length ?? 0) > 0;
      let delayMs = (work.pollAfterSeconds ?? 0) * 1000;
      let slowDown = !tookWork && !offered && this.now() - started < this.timing.fastAnswerMs;
      if (offered) {
        let took: boolean;
        const wasQuiet = this.actions.isQuiet();
        try {
          took = await this.actions.offer(work.actions, work.cancel ?? [], started);
        } catch (error) {
          this.stats.errors++;
          const retryInMs = retry.next();
          this.log.error({ event: "actions.failed", error: errorInfo(error), retryInMs }, "taking offered actions failed");
          await sleep(retryInMs, life);
          continue;
        }
        if (took) {
          tookWork = true;
          // The server offers what we took (and repeats the cancels) on every poll until our
          // reports arrive: poll once they are answered, not at once to be handed the same
          // again. A running action does not hold the poll back; one being cancelled does,
          // until its CANCELLED report is answered (see ActionQueue.waitQuiet).
          await this.actions.waitQuiet(life, this.timing.heldWorkDelayMs);
        } else if (!tookWork) {
          // All of it is ours already; the server offers it until our reports arrive.
          await this.actions.waitQuiet(life, this.timing.heldWorkDelayMs);
          // Nothing was on its way: the server offers what it has every report of. Do not spin.
          if (wasQuiet) slowDown = true;
        }
      }
      // Poll again soon after work, long-poll when idle; back off from a server that answers
      // at once with nothing new.
      if (slowDown) delayMs = Math.max(delayMs, retry.next());
      else retry.reset();
      if (delayMs > 0) await sleep(delayMs, life);
    }
    return this.fatal ? this.fatalOutcome(this.fatal) : { kind: "stopped" };
  }

  /**
   * An update entered a reported state: a heartbeat goes out at once, and the update waits
   * (up to `updateStateReportMs`) until one built after this moment has been answered, so
   * the server sees each state rather than only the last of a quick run.
   */
  private reportUpdateState(): Promise<void> {
    const want = this.heartbeatsBuilt + 1;
    this.heartbeatWaker.wake();
    const waitMs = this.timing.updateStateReportMs;
    if (waitMs <= 0 || this.stopped || !this.heartbeatLoopRunning) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.heartbeatWaiters = this.heartbeatWaiters.filter((w) => w !== waiter);
        resolve();
      };
      const waiter = { want, resolve: done };
      const timer = setTimeout(done, waitMs);
      this.heartbeatWaiters.push(waiter);
    });
  }

  private heartbeatSettled(seq: number): void {
    this.heartbeatsSettled = Math.max(this.heartbeatsSettled, seq);
    for (const waiter of this.heartbeatWaiters.filter((w) => w.want <= this.heartbeatsSettled)) waiter.resolve();
  }

  private async heartbeatLoop(signal: AbortSignal, life: AbortController): Promise<void> {
    this.heartbeatLoopRunning = true;
    try {
      await this.heartbeats(signal, life);
    } finally {
      this.heartbeatLoopRunning = false;
      // Nobody will send what an update waits to report.
      for (const waiter of [...this.heartbeatWaiters]) waiter.resolve();
    }
  }

  /**
   * The periodic heartbeat. The first goes out at once (the server learns the queue, the
   * renderedVersion and that the device is up); a wake (an update state, an action's
   * condition) sends one at once too, without delay, as the operator watches those. Every
   * heartbeat answered, periodic or woken, draws the time to the next one anew (± jitter):
   * after the first of a fleet started together, or after reports that a fleet-wide change
   * sent at the same instant, the periodic ones that follow are spread, not in step.
   */
  private async heartbeats(signal: AbortSignal, life: AbortController): Promise<void> {
    const retry = new Backoff({ ...this.timing.retry, random: this.random });
    let delayMs = 0; // the first heartbeat goes out at once
    // The server said when to come back (a 429 for its load, issue 22 item 4; a 503): a wake
    // (an update state, an action's condition) does not cut that wait short. The report sent
    // after it is built then and carries what the wake was for.
    let told = false;
    while (!signal.aborted) {
      if (delayMs > 0 && told) {
        await sleep(delayMs, signal);
        await this.heartbeatWaker.sleep(0); // a wake that came meanwhile: this report carries it
      } else if (delayMs > 0) await this.heartbeatWaker.sleep(delayMs, signal);
      told = false;
      if (signal.aborted) break;
      if (this.isSilent) {
        delayMs = this.silentUntil - this.now();
        continue;
      }
      try {
        const answer = await this.sendStatus({}, signal);
        retry.reset();
        delayMs = jittered(answer.heartbeatSeconds * 1000, this.timing.heartbeatJitter, this.random);
        this.log.debug({ event: "heartbeat", heartbeatSeconds: answer.heartbeatSeconds, nextInMs: delayMs }, "status reported");
      } catch (error) {
        if (signal.aborted) break;
        const decision = this.decide(error, retry);
        if (decision.kind === "fatal") {
          this.fatal = decision.outcome;
          life.abort();
          break;
        }
        this.stats.errors++;
        this.log.warn({ event: "heartbeat.failed", error: errorInfo(error), retryInMs: decision.delayMs }, "heartbeat failed");
        delayMs = decision.delayMs;
        told = decision.told === true;
      }
    }
  }

  private async sendStatus(extra: Pick<StatusReport, "decommissioning">, signal: AbortSignal) {
    const resources = await this.resources();
    const { system, facts } = await this.systemForHeartbeat();
    // From here to the POST nothing awaits: the queue listed is the queue as it is sent,
    // and so is the update condition.
    const seq = ++this.heartbeatsBuilt;
    const updating = this.updater.condition();
    const sending = this.options.client.postStatus(
      this.token(),
      {
        resources,
        applications: this.updater.applications(),
        conditions: { ...(updating ? { updating } : {}), rebooting: this.actions.rebooting },
        config: { renderedVersion: this.appliedVersion },
        actions: this.actions.queue(),
        capabilities: this.capabilities,
        ...(system ? { system } : {}),
        ...extra,
      },
      signal,
    );
    const inFlight = sending.then(
      () => this.heartbeatSettled(seq),
      () => this.heartbeatSettled(seq),
    );
    this.heartbeatInFlight = inFlight;
    let answer;
    try {
      answer = await sending;
    } finally {
      if (this.heartbeatInFlight === inFlight) this.heartbeatInFlight = null;
    }
    this.stats.heartbeats++;
    // Acknowledged: later heartbeats carry usage only until a fact changes.
    if (facts) this.factsSent = { facts, at: this.now() };
    this.maybeRenewCertificate();
    return answer;
  }

  /**
   * `system` for the next heartbeat: the full facts when the server has not acknowledged
   * these (the first heartbeat after start, a changed fact, a failed send) or after
   * FACTS_REFRESH_MS; otherwise `usage` alone. A failed reading sends nothing rather than
   * failing the heartbeat.
   */
  private async systemForHeartbeat(): Promise<{ system?: SystemFacts; facts?: StaticFacts }> {
    const source = this.options.system;
    if (!source) return {};
    try {
      const [facts, usage] = await Promise.all([source.facts(), source.usage()]);
      const sent = this.factsSent;
      const full = !sent || this.now() - sent.at >= FACTS_REFRESH_MS || (sent.facts !== facts && JSON.stringify(sent.facts) !== JSON.stringify(facts));
      return full ? { system: { ...facts, usage }, facts } : { system: { usage } };
    } catch (error) {
      this.log.warn({ event: "system-facts.failed", error: errorInfo(error) }, "reading host facts failed");
      return {};
    }
  }

  /** The full facts for the enrollment request, so the operator deciding sees the machine. */
  private async enrollmentFacts(): Promise<{ system?: SystemFacts }> {
    const source = this.options.system;
    if (!source) return {};
    try {
      const [facts, usage] = await Promise.all([source.facts(), source.usage()]);
      return { system: { ...facts, usage } };
    } catch (error) {
      this.log.warn({ event: "system-facts.failed", error: errorInfo(error) }, "reading host facts failed");
      return {};
    }
  }

  private async resources(): Promise<Resources> {
    try {
      return await this.options.health.resources();
    } catch (error) {
      this.log.warn({ event: "health.failed", error: errorInfo(error) }, "reading resource health failed");
      return { cpu: "Error", memory: "Error", disk: "Error" };
    }
  }

  // -------------------------------------------------------------------------------------
  // Decommission

  private async decommission(life: AbortSignal, stopHeartbeats: () => Promise<void>): Promise<AgentOutcome> {
    this.phase = "decommissioning";
    this.log.info({ event: "decommission.requested" }, "decommission requested by the server");
    // A periodic heartbeat without `decommissioning` must not race the reports below.
    await stopHeartbeats();
    const identity = this.requireIdentity();
    if (!identity.decommissioning) await this.saveIdentity({ ...identity, decommissioning: true });

    if (!(await this.reportDecommissioning({ state: "Started" }, life))) return { kind: "stopped" };
    this.log.info({ event: "decommission.started" }, "decommissioning started");

    let result: { state: "Completed" | "Error"; info?: string } = { state: "Completed" };
    const steps: [string, () => Promise<void>][] = [
      ["stop actions", () => this.actions.remove()],
      ["stop applications", () => this.updater.reset()],
      ["remove applied spec", () => this.updater.forgetApplied()],
    ];
    for (const [step, run] of steps) {
      try {
        await run();
        this.log.info({ event: "decommission.step", step }, `decommission step done: ${step}`);
      } catch (error) {
        result = { state: "Error", info: `${step}: ${error instanceof Error ? error.message : String(error)}` };
        this.log.error({ event: "decommission.step.failed", step, error: errorInfo(error) }, `decommission step failed: ${step}`);
        break;
      }
    }

    if (!(await this.reportDecommissioning(result, life))) return { kind: "stopped" };
    this.log.info({ event: `decommission.${result.state.toLowerCase()}`, info: result.info }, `decommissioning ${result.state}`);
    await this.wipeCredential();
    return { kind: "decommissioned", ...result };
  }

  /**
   * Sends a decommissioning report, retrying until the server has it. 401/403 means the
   * server already revoked the credential (it has seen the end): nothing more to tell.
   * Returns false only when the agent was stopped first.
   */
  private async reportDecommissioning(decommissioning: NonNullable<StatusReport["decommissioning"]>, life: AbortSignal): Promise<boolean> {
    const retry = new Backoff({ ...this.timing.retry, random: this.random });
    while (!life.aborted) {
      try {
        await this.sendStatus({ decommissioning }, life);
        this.log.debug({ event: "heartbeat", decommissioning: decommissioning.state }, "status reported");
        return true;
      } catch (error) {
        if (life.aborted) break;
        if (error instanceof ProtocolError && (error.status === 401 || error.status === 403)) {
          this.log.warn({ event: "decommission.report.refused", state: decommissioning.state, code: error.code }, "server no longer accepts this device's reports");
          return true;
        }
        const decision = this.decide(error, retry);
        const delayMs = decision.kind === "retry" ? decision.delayMs : retry.next();
        this.stats.errors++;
        this.log.warn({ event: "decommission.report.failed", state: decommissioning.state, error: errorInfo(error), retryInMs: delayMs }, "decommission report failed");
        await sleep(delayMs, life);
      }
    }
    return false;
  }

  private async wipeCredential(): Promise<void> {
    const identity = this.requireIdentity();
    const wiped: IdentityDocument = {
      version: 1,
      deviceName: identity.deviceName,
      ...(identity.enrollmentId === undefined ? {} : { enrollmentId: identity.enrollmentId }),
      decommissioning: false,
      decommissioned: true,
      decommissionedAt: isoTime(this.now()),
    };
    await this.saveIdentity(wiped);
    this.log.info({ event: "decommission.credential-wiped" }, "credential wiped; the agent stops");
  }

  /** 401/403 on /work or /status. After a crash mid-decommission that is the end we wanted. */
  private async fatalOutcome(outcome: AgentOutcome): Promise<AgentOutcome> {
    if (outcome.kind === "revoked" && this.identity?.decommissioning) {
      this.log.info({ event: "decommission.resumed" }, "credential revoked during decommissioning; finishing");
      await this.actions.remove();
      await this.updater.reset();
      await this.updater.forgetApplied();
      await this.wipeCredential();
      return { kind: "decommissioned", state: "Completed" };
    }
    return outcome;
  }

  // -------------------------------------------------------------------------------------
  // Helpers

  /** What to do after a failed /work or /status request. */
  private decide(error: unknown, retry: Backoff): Decision {
    if (error instanceof ProtocolError) {
      if (error.status === 401 || error.status === 403) {
        return { kind: "fatal", outcome: { kind: "revoked", status: error.status, message: error.message } };
      }
      // Rate-limited, or the server's database unreachable (503): come back when it says, not
      // after a backoff grown through an outage.
      if (error.status === 429 || error.status === 503) {
        const wait = error.retryAfterMs;
        if (wait !== undefined) return { kind: "retry", delayMs: wait + Math.floor(this.random() * Math.min(1_000, wait * 0.1 + 100)), told: true };
      }
      return { kind: "retry", delayMs: retry.next() };
    }
    if (error instanceof TransportError || error instanceof InvalidResponseError || error instanceof StateError) {
      return { kind: "retry", delayMs: retry.next() };
    }
    return { kind: "retry", delayMs: retry.next() };
  }

  private async retryAfter(error: unknown, retry: Backoff, message: string, signal: AbortSignal): Promise<void> {
    const decision = this.decide(error, retry);
    const delayMs = decision.kind === "retry" ? decision.delayMs : retry.next();
    this.stats.errors++;
    this.log.warn({ event: "enrollment.failed", error: errorInfo(error), retryInMs: delayMs }, message);
    await sleep(delayMs, signal);
  }

  private async saveIdentity(identity: IdentityDocument): Promise<void> {
    await this.options.store.write("identity", identity);
    this.identity = identity;
  }

  private requireIdentity(): IdentityDocument {
    if (!this.identity) throw new StateError("no identity loaded");
    return this.identity;
  }

  /** The bearer token; "" when the client certificate authenticates (the client then sends no Authorization). */
  private token(): string {
    if (this.identity?.certificate !== undefined) return "";
    const token = this.identity?.token;
    if (token === undefined) throw new StateError("no credential");
    return token;
  }

  // -------------------------------------------------------------------------------------
  // Client certificate (issue 23)

  /** Set when the server answered that it signs no device certificates: tokens then. */
  private certificatesUnavailable = false;
  private renewing: Promise<void> | null = null;

  private get wantsCertificate(): boolean {
    return this.options.useClientCertificate !== undefined && !this.certificatesUnavailable;
  }

  private presentCertificate(): void {
    const { key, certificate } = this.identity ?? {};
    if (key !== undefined && certificate !== undefined) this.options.useClientCertificate?.({ cert: certificate, key });
  }

  /** After a heartbeat: renews once less than a third of the certificate's time is left (reckoned from when it came). */
  private maybeRenewCertificate(): void {
    const { certificate, certificateReceivedAt } = this.identity ?? {};
    if (certificate === undefined || this.renewing) return;
    const from = certificateReceivedAt ? Date.parse(certificateReceivedAt) : this.now();
    const to = Date.parse(new X509Certificate(certificate).validTo);
    if (this.now() < from + ((to - from) * 2) / 3) return;
    this.renewing = this.renewCertificate("renewal").finally(() => (this.renewing = null));
  }

  /**
   * POST /certificate with a new key's CSR, over the current certificate (or, moving over, the
   * token); the key and the certificate are written together (identity.json, 0600) before they
   * are used. A failure is logged and tried again after the next heartbeat (or start).
   */
  private async renewCertificate(why: "renewal" | "move-over"): Promise<void> {
    const identity = this.identity;
    if (!identity) return;
    const key = newDeviceKey();
    try {
      const answer = await this.options.client.renewCertificate(this.token(), certificateRequest(key, identity.deviceName), this.stopController.signal);
      const { token: _token, ...rest } = this.identity ?? identity;
      const next: IdentityDocument = { ...rest, key, certificate: answer.certificate, certificateReceivedAt: isoTime(this.now()) };
      await this.saveIdentity(next);
      this.identity = next;
      this.presentCertificate();
      this.log.info({ event: `certificate.${why}`, notAfter: answer.notAfter }, why === "renewal" ? "client certificate renewed" : "moved over from the device token to a client certificate");
    } catch (error) {
      if (error instanceof ProtocolError && error.status === 400 && NO_DEVICE_CA.test(error.message)) this.certificatesUnavailable = true;
      if (!this.stopped) this.log.warn({ event: `certificate.${why}-failed`, error: errorInfo(error) }, "could not get a client certificate; trying again later");
    }
  }

  private logOutcome(outcome: AgentOutcome): void {
    switch (outcome.kind) {
      case "stopped":
        this.log.info({ event: "stopped" }, "agent stopped");
        return;
      case "decommissioned":
        this.log.info({ event: "decommissioned", state: outcome.state, info: outcome.info }, "device decommissioned");
        return;
      case "already-decommissioned":
        this.log.info({ event: "decommissioned" }, "this device was decommissioned; clear the state directory to enroll again");
        return;
      case "revoked":
        this.log.error({ event: "revoked", status: outcome.status, message: outcome.message }, "the server revoked this device's credential");
        return;
      case "enrollment-conflict":
        this.log.error({ event: "enrollment.conflict", message: outcome.message }, `device name "${this.options.identity.name}" is taken`);
        return;
      case "enrollment-rejected":
        this.log.error({ event: "enrollment.rejected", message: outcome.message }, "the server rejected the enrollment request");
        return;
      case "token-lost":
        this.log.error(
          { event: "token.lost", enrollmentId: outcome.enrollmentId },
          "enrollment was approved but the credential never reached the state directory; ask an operator to remove the device and enroll again",
        );
        return;
      case "state-error":
        this.log.error({ event: "state.error", message: outcome.message }, "state directory problem");
        return;
      case "restart":
        this.log.warn({ event: "restart", info: outcome.info, exitStatus: UPGRADE_EXIT_STATUS }, "restarting into the upgraded agent");
        return;
    }
  }
}

/** 32 random bytes, base64url (43 characters), as the protocol asks. */
export async function newSecret(): Promise<string> {
  return (await randomBytes(32)).toString("base64url");
}

function errorInfo(error: unknown): Record<string, unknown> {
  if (error instanceof ProtocolError) return { type: error.name, status: error.status, code: error.code, message: error.message };
  if (error instanceof InvalidResponseError) return { type: error.name, status: error.status, message: error.message };
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { message: String(error) };
}
