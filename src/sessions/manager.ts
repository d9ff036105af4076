import type { Subscriptions } from "../events/subscriptions.ts";
import type { SessionRecord } from "../model/records.ts";
import { liveView } from "./context.ts";
import { buildCore, type SessionCore, type SessionManagerOptions } from "./core.ts";
import type { Delivery, Ingested, IngestRequest, Prepared } from "./ingest.ts";
import type { RecoveryCounts } from "./recovery.ts";
import { type CheckTarget, checkSession, type ReplayVerdict } from "./replay-check.ts";
import type { SessionLog } from "./session-log.ts";

export { MAX_RESUMES } from "./after-attempt.ts";
export type { SessionManagerOptions } from "./core.ts";
export type {
  Delivery,
  IngestEvent,
  Ingested,
  IngestRequest,
  IngestSource,
  Prepared,
} from "./ingest.ts";
export type { StartInput } from "./lifecycle.ts";
export type { OutcomeWait } from "./outcomes.ts";
export type { CheckTarget, Divergence, ReplayVerdict } from "./replay-check.ts";

/**
 * The sessions as the routes see them: a facade over the session core (core.ts, built in the
 * order its pieces depend on each other). Events come in through `ingest`; the rest reads,
 * watches and stops sessions, and runs recovery and shutdown.
 * @example
 * const sessions = new SessionManager({
 *   deps: { stores, runtime, secrets, log },
 *   limits: { workflowTimeoutMs: 10_000, maxActive: 100, evictAfterMs: 2000 },
 * });
 * const { session, outcome } = await sessions.ingest({ source: { kind: "webhook", trigger }, doc, deployment, event });
 */
export class SessionManager {
  readonly subscriptions: Subscriptions;
  #core: SessionCore;

  constructor(opts: SessionManagerOptions) {
    this.#core = buildCore(opts);
    this.subscriptions = this.#core.services.subscriptions;
  }

  /** Turns an event into a session: the one way in, for every source (see ingest.ts). */
  ingest(req: IngestRequest): Promise<Ingested> {
    return this.#core.ingest(req);
  }

  /**
   * The same way in for a delivery (a webhook's request, a connection's events): planned now,
   * so that its ids are known (its dedup record names them) before `run()` stores anything.
   */
  prepare(delivery: Delivery): Prepared {
    return this.#core.ingest.prepare(delivery);
  }

  /**
   * What the front door's thread took (src/front/): a session it committed, run here; an
   * event it stored alone; an event for the subscribers of `source`.
   */
  get front(): SessionCore["front"] {
    return this.#core.front;
  }

  /**
   * Replays a stored session's journal against a build, nothing run for real: whether the code
   * takes its first `upTo` steps as recorded (replay-check.ts).
   */
  checkReplay(target: CheckTarget): Promise<ReplayVerdict> {
    return checkSession(this.#core.checks, target);
  }

  /** Durable sessions parked here (waiting without a process). */
  get parkedCount(): number {
    return this.#core.lifecycle.parked;
  }

  get activeCount(): number {
    return this.#core.lifecycle.size;
  }

  /**
   * Calls `listener` with each session that starts on this instance (its record as created),
   * however it came: a webhook, the shared queue, a re-run, `start()` in a workflow.
   */
  onStarted(listener: (record: SessionRecord) => void): () => void {
    return this.#core.channel.listen((e) => {
      if (e.type === "started") listener(e.record);
    });
  }

  /** The live log of a running session, or null when it is not running here. */
  live(sessionId: string): { record: SessionRecord; log: SessionLog } | null {
    return liveView(this.#core.here, sessionId);
  }

  /**
   * A project changed (a deploy, a var; here or, over the bus, on another instance): the next
   * session of it starts with the project as stored now.
   */
  projectChanged(projectId: string): void {
    this.#core.projects.forget(projectId);
  }

  /** Calls `onEnd` with the final record when the session ends. */
  onEnd(sessionId: string, onEnd: (record: SessionRecord) => void): () => void {
    return this.#core.channel.onEnd(sessionId, onEnd);
  }

  /**
   * The record once the session has ended and its end is stored, wherever it runs: here (once
   * the writes queued for it are written), on another instance (told over the bus once it
   * wrote it), or already (read from storage; one that ended here a moment ago is read once
   * its last write is done). Null for a session not stored.
   */
  async whenEnded(sessionId: string): Promise<SessionRecord | null> {
    const { services, channel, writer, cluster } = this.#core;
    if (services.outcomes.has(sessionId)) return channel.ended(sessionId);
    await writer.written(sessionId);
    return cluster.link.whenEnded(sessionId);
  }

  /**
   * Stops a session, here or on its owner. Resolves with its record once its process is gone
   * and its end (`stopped`) is stored.
   */
  stop(sessionId: string): Promise<SessionRecord> {
    return this.#core.lifecycle.stop(sessionId) ?? this.#core.cluster.link.stopElsewhere(sessionId);
  }

  /**
   * After a restart (or alongside other instances): takes over sessions nobody runs. Resolves
   * once the records it changed are stored (the sessions it interrupted); the ones it resumed
   * run on.
   */
  async recover(): Promise<RecoveryCounts> {
    return this.#core.cluster.recovery.recover();
  }

  /**
   * Starts taking sessions from the shared queue (alone: nothing to take). Call once this
   * instance can run them: sessions it took before would wait on it while others could run them.
   */
  serve(): void {
    this.#core.cluster.work.serve();
  }

  /**
   * The service begins to stop: no session others left is taken here from now on (the queue,
   * recovery). Resolves once every non-durable session running here has ended; durable ones are
   * left at `shutdown`, to resume (elsewhere in a fleet, at once).
   */
  drain(): Promise<void> {
    return this.#core.lifecycle.drain();
  }

  /**
   * Call before the runtime is disposed: no session is admitted from now on, and sessions cut
   * short are shutdown casualties.
   */
  shutdown(): void {
    this.#core.lifecycle.shutdown();
  }

  /** Stops recovery and listening, and waits for every pending write. Idempotent. */
  async dispose(): Promise<void> {
    this.shutdown();
    const { recovery, work, link } = this.#core.cluster;
    recovery.dispose();
    work.dispose();
    link.dispose();
    this.#core.services.sdk?.dispose();
    await this.#core.writer.idle();
  }
}
