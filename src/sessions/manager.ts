import { type Clock, isoNow, systemClock } from "../clock.ts";
import { type Cluster, localCluster } from "../cluster/cluster.ts";
import { Subscriptions } from "../events/subscriptions.ts";
import type { Logger } from "../log.ts";
import type { EventRecord, HandlerEvent, SessionRecord } from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/stores.ts";
import type { ProjectStore } from "../store/project-store.ts";
import { buildCache } from "./build-cache.ts";
import { type EventMessage, eventOf } from "./event-wire.ts";
import { createIngest, type Ingested, type IngestPlan, type IngestRequest } from "./ingest.ts";
import { Lifecycle } from "./lifecycle.ts";
import { Outcomes, type OutcomeWait } from "./outcomes.ts";
import { Parking } from "./parking.ts";
import { Recovery, type RecoveryCounts } from "./recovery.ts";
import { ClusterLink } from "./remote.ts";
import { SdkService } from "./sdk.ts";
import type { SessionLog } from "./session-log.ts";
import { SharedWork } from "./shared-work.ts";
import { SessionWriter } from "./writer.ts";

export type { Ingested, IngestPlan, IngestRequest, IngestSource } from "./ingest.ts";
export { planIngest } from "./ingest.ts";
export { MAX_RESUMES, type StartInput } from "./lifecycle.ts";
export type { OutcomeWait } from "./outcomes.ts";

export interface SessionManagerOptions {
  stores: Stores;
  runtime: Runtime;
  secrets: SecretBox;
  log: Logger;
  workflowTimeoutMs: number;
  /** Sessions alive at once (running or waiting for a slot); past it `start` refuses. */
  maxActive: number;
  /**
   * A durable session that waits in next_event this long gives up its Python process and is
   * resumed by replay when the wait ends. Negative: never.
   */
  evictAfterMs: number;
  /** Sessions running here before this instance stops taking shared ones (default maxActive). */
  slots?: number;
  /** The other instances, if any (default: none). */
  cluster?: Cluster;
  /** How often a shared instance looks for sessions whose owner died, ms. */
  sweepMs?: number;
  /** Told when a session has ended and its record is written (retention counts them). */
  onEnded?: (record: SessionRecord) => void;
  /** Told after each event stored (retention counts them). */
  onEvent?: () => void;
  /** Time for timers and timestamps (tests drive it by hand). */
  clock?: Clock;
  /**
   * The project store and the service's external base URL: given, the SDK's requests (store,
   * start, signals, outcome, webhook URLs) are answered; absent, they are refused.
   */
  sdk?: { store: ProjectStore; publicUrl: () => string };
}

/**
 * The sessions as the routes see them, composed of pieces that each own their state: the
 * lifecycle, the writer (records and logs written behind), the outcomes held requests wait
 * for, the journal (per session, inside the lifecycle), parking, recovery and the cluster link.
 * @example
 * const sessions = new SessionManager({ stores, runtime, secrets, log, workflowTimeoutMs: 10_000, maxActive: 100, evictAfterMs: 2000 });
 * const { session, outcome } = await sessions.ingest({ source: { kind: "webhook", trigger }, doc, deployment, event });
 */
export class SessionManager {
  readonly subscriptions: Subscriptions;
  #stores: Stores;
  #writer: SessionWriter;
  #outcomes: Outcomes;
  #lifecycle: Lifecycle;
  #link: ClusterLink;
  #recovery: Recovery;
  #sdk: SdkService | null = null;
  #work: SharedWork;
  #ingest: ReturnType<typeof createIngest>;
  #disposed = false;

  constructor(opts: SessionManagerOptions) {
    const clock = opts.clock ?? systemClock;
    const cluster = opts.cluster ?? localCluster();
    this.#stores = opts.stores;
    this.subscriptions = new Subscriptions((sessionId, subId) => {
      this.#lifecycle.get(sessionId)?.log.append({
        t: isoNow(clock),
        kind: "warning",
        text: `subscription ${subId}: buffer full, oldest event dropped`,
      });
    });
    this.#writer = new SessionWriter({ stores: opts.stores, log: opts.log, clock });
    this.#outcomes = new Outcomes(clock);
    const builds = buildCache(opts.stores);
    if (opts.sdk) {
      this.#sdk = new SdkService({
        ...opts.sdk,
        stores: opts.stores,
        cluster,
        clock,
        builds,
        live: (id) => this.#lifecycle.get(id),
        ingest: (req) => this.ingest(req),
      });
    }
    this.#lifecycle = new Lifecycle({
      ...opts,
      clock,
      writer: this.#writer,
      outcomes: this.#outcomes,
      parking: new Parking({ evictAfterMs: opts.evictAfterMs, clock }),
      subscriptions: this.subscriptions,
      builds,
      sdk: this.#sdk ?? undefined,
      history: async (sinceMs) => {
        const out: { source: string; event: HandlerEvent }[] = [];
        for (const m of await cluster.bus.since("events", sinceMs)) {
          const event = await eventOf(m, opts.stores);
          if (event) out.push({ source: (m as EventMessage).source, event });
        }
        return out;
      },
    });
    this.#lifecycle.listen((e) => {
      if (e.type !== "started") this.#sdk?.closed(e.record.id);
    });
    const { onEnded } = opts;
    if (onEnded) {
      this.#lifecycle.listen((e) => {
        if (e.type === "ended") void e.written.then(() => onEnded(e.record));
      });
    }
    this.#link = new ClusterLink(cluster, opts.stores, this.#lifecycle, this.subscriptions);
    this.#work = new SharedWork({
      cluster,
      stores: opts.stores,
      lifecycle: this.#lifecycle,
      log: opts.log,
      clock,
      slots: opts.slots ?? opts.maxActive,
    });
    this.#recovery = new Recovery({
      stores: opts.stores,
      cluster,
      lifecycle: this.#lifecycle,
      sweepMs: opts.sweepMs,
      clock,
    });
    this.#ingest = createIngest({
      clock,
      admit: async (where, sync) =>
        !this.#disposed &&
        (where === "here" ? this.#lifecycle.hasCapacity() : await this.#work.canAccept(sync)),
      storeEvent: async (event) => {
        await opts.stores.events.put(event);
        opts.onEvent?.();
      },
      publish: (source, e) => this.publishEvent(source, handlerEvent(e)),
      begin: async (input, where) =>
        where === "here" ? this.#lifecycle.start(input) : this.#work.accept(input),
      stored: (id) => this.#writer.written(id),
      outcome: (id, timeoutMs) => this.waitOutcome(id, timeoutMs),
    });
  }

  /**
   * Turns an event into a session: the one way in, for every source (see ingest.ts). `plan`:
   * the ids decided before (a webhook's delivery record names them), else new ones.
   */
  ingest(req: IngestRequest, plan?: IngestPlan): Promise<Ingested> {
    return this.#ingest(req, plan);
  }

  /** Hands a webhook event to the subscriptions of `source` (`<project_id>:<trigger>`), everywhere. */
  publishEvent(source: string, event: HandlerEvent): void {
    this.#link.publishEvent(source, event);
  }

  /** Durable sessions parked here (waiting without a process). */
  get parkedCount(): number {
    return this.#lifecycle.parked;
  }

  get activeCount(): number {
    return this.#lifecycle.size;
  }

  /** Whether another session may start here now. */
  hasCapacity(): boolean {
    return !this.#disposed && this.#lifecycle.hasCapacity();
  }

  /**
   * Calls `listener` with each session that starts on this instance (its record as created),
   * however it came: a webhook, the shared queue, a re-run, `start()` in a workflow.
   */
  onStarted(listener: (record: SessionRecord) => void): () => void {
    return this.#lifecycle.listen((e) => {
      if (e.type === "started") listener(e.record);
    });
  }

  /** Resolves with the first final outcome, the session's end, or a timeout. */
  waitOutcome(sessionId: string, timeoutMs: number): Promise<OutcomeWait> {
    const held = this.#outcomes.wait(sessionId, timeoutMs);
    if (held) return held;
    return this.#stores.sessions
      .get(sessionId)
      .then((session): OutcomeWait => (session ? { kind: "ended", session } : { kind: "timeout" }));
  }

  /** The live log of a running session, or null when it is not running here. */
  live(sessionId: string): { record: SessionRecord; log: SessionLog } | null {
    return this.#lifecycle.get(sessionId);
  }

  /** Calls `onEnd` with the final record when the session ends. */
  onEnd(sessionId: string, onEnd: (record: SessionRecord) => void): () => void {
    return this.#outcomes.onEnd(sessionId, onEnd);
  }

  /**
   * The record once the session has ended, wherever it runs: here, on another instance (told
   * over the bus), or already (read from storage).
   */
  whenEnded(sessionId: string): Promise<SessionRecord | null> {
    if (this.#outcomes.has(sessionId)) {
      return new Promise((resolve) => this.#outcomes.onEnd(sessionId, resolve));
    }
    return this.#link.whenEnded(sessionId);
  }

  /** Stops a session, here or on its owner. Resolves with its record once its process is gone. */
  stop(sessionId: string): Promise<SessionRecord> {
    return this.#lifecycle.stop(sessionId) ?? this.#link.stopElsewhere(sessionId);
  }

  /** After a restart (or alongside other instances): takes over sessions nobody runs. */
  async recover(): Promise<RecoveryCounts> {
    const counts = await this.#recovery.recover();
    this.#work.serve();
    return counts;
  }

  /** Call before the runtime is disposed: sessions cut short from now on are shutdown casualties. */
  shutdown(): void {
    this.#disposed = true;
    this.#lifecycle.shutdown();
  }

  /** Stops sweeping and listening, and waits for every pending write. Idempotent. */
  async dispose(): Promise<void> {
    this.shutdown();
    this.#recovery.dispose();
    this.#work.dispose();
    this.#link.dispose();
    this.#sdk?.dispose();
    await this.#writer.idle();
  }

  /** Waits until every queued write has reached storage (tests, shutdown). */
  flush(): Promise<void> {
    return this.#writer.flush();
  }
}

/** An event as subscribers get it. */
function handlerEvent(e: EventRecord): HandlerEvent {
  return { event_id: e.id, session_id: e.session_id, event_type: e.event_type, data: e.data };
}
