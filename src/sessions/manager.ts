import { type Cluster, localCluster } from "../cluster/cluster.ts";
import { HooklineError } from "../errors.ts";
import { Subscriptions } from "../events/subscriptions.ts";
import type { Logger } from "../log.ts";
import type {
  BuildFiles,
  BuildRecord,
  EventRecord,
  HandlerEvent,
  ProjectDoc,
  SessionEnd,
  SessionRecord,
  SessionState,
  TriggerRecord,
} from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/stores.ts";
import {
  type Active,
  contiguous,
  now,
  type OutcomeWait,
  restoreSubscriptions,
  sessionEnv,
} from "./active.ts";
import { createHost, type HostContext } from "./host.ts";
import { SessionLog } from "./session-log.ts";

export type { OutcomeWait } from "./active.ts";

/** A durable session whose process dies is resumed this many times, then fails. */
export const MAX_RESUMES = 3;
/** How often a running session's log is written behind to storage. */
const LOG_FLUSH_MS = 100;

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
  /** The other instances, if any (default: none). */
  cluster?: Cluster;
  /** How often a shared instance looks for sessions whose owner died, ms. */
  sweepMs?: number;
  /** Told when a session has ended and its record is written (retention counts them). */
  onEnded?: (record: SessionRecord) => void;
}

export interface StartInput {
  sessionId: string;
  doc: ProjectDoc;
  trigger: TriggerRecord;
  deploymentId: string;
  buildId: string;
  event: EventRecord;
}

/**
 * Owns session state: creates records, hands sessions to the runtime, records prints,
 * activities and outcomes, settles held sync requests, and serves subscriptions.
 */
export class SessionManager {
  #opts: SessionManagerOptions;
  #active = new Map<string, Active>();
  #builds = new Map<string, BuildFiles>();
  #disposed = false;
  #writes = new Set<Promise<unknown>>();
  readonly subscriptions: Subscriptions;

  constructor(opts: SessionManagerOptions) {
    this.#opts = opts;
    this.#cluster = opts.cluster ?? localCluster();
    this.subscriptions = new Subscriptions((sessionId, subId) => {
      this.#active.get(sessionId)?.log.append({
        t: now(),
        kind: "warning",
        text: `subscription ${subId}: buffer full, oldest event dropped`,
      });
    });
    this.#hostContext = {
      stores: opts.stores,
      subscriptions: this.subscriptions,
      persist: (active) => this.#persist(active),
      parkIfLong: (active, waiting, waitMs) => this.#parkIfLong(active, waiting, waitMs),
    };
    const { bus, instanceId } = this.#cluster;
    if (!this.#cluster.shared) return;
    // Events reach the subscribers on every instance; stop requests reach the session's owner.
    this.#unsubscribe.push(
      bus.subscribe("events", (m) => {
        const { origin, source, event } = m as {
          origin: string;
          source: string;
          event: HandlerEvent;
        };
        if (origin !== instanceId) this.subscriptions.publish(source, event);
      }),
      bus.subscribe("stop", (m) => {
        const { session_id } = m as { session_id: string };
        if (this.#active.has(session_id)) void this.stop(session_id);
      }),
      bus.subscribe("ended", (m) => {
        const { session_id } = m as { session_id: string };
        for (const resolve of this.#remoteEnds.get(session_id) ?? []) resolve();
        this.#remoteEnds.delete(session_id);
      }),
    );
  }

  #cluster: Cluster;
  /** What each session's host may ask of the manager. */
  #hostContext: HostContext;
  #unsubscribe: (() => void)[] = [];
  #remoteEnds = new Map<string, (() => void)[]>();
  #sweeper: NodeJS.Timeout | null = null;

  /**
   * Hands a webhook event to the subscriptions of `source` (`<project_id>:<trigger>`), on every
   * instance.
   */
  publishEvent(source: string, event: HandlerEvent): void {
    this.subscriptions.publish(source, event);
    if (this.#cluster.shared) {
      this.#cluster.bus.publish("events", { origin: this.#cluster.instanceId, source, event });
    }
  }

  get activeCount(): number {
    return this.#active.size;
  }

  /** Whether another session may start now. */
  hasCapacity(): boolean {
    return !this.#disposed && this.#active.size < this.#opts.maxActive;
  }

  /** Creates the session record and starts it in the background. */
  start(input: StartInput): SessionRecord {
    const t = now();
    const record: SessionRecord = {
      id: input.sessionId,
      project_id: input.doc.project.id,
      project_name: input.doc.project.name,
      deployment_id: input.deploymentId,
      build_id: input.buildId,
      trigger_id: input.trigger.id,
      trigger_name: input.trigger.name,
      event_id: input.event.id,
      entry: input.trigger.call ?? "",
      durable: input.trigger.is_durable,
      is_sync: input.trigger.is_sync,
      state: "created",
      error: null,
      attempts: 0,
      created_at: t,
      started_at: null,
      ended_at: null,
      updated_at: t,
    };
    const active = this.#track(record, new SessionLog());
    active.journal = [];
    this.#persist(active);
    if (this.#cluster.shared) void this.#cluster.claim(record.id).catch(() => {});
    void this.#run(active, input.event);
    return record;
  }

  #track(record: SessionRecord, log: SessionLog): Active {
    const active: Active = {
      record,
      log,
      run: null,
      final: null,
      waiters: new Set(),
      stopRequested: false,
      writes: Promise.resolve(),
      flushTimer: null,
      parked: null,
      redact: (text) => text,
      journal: null,
    };
    log.listen(() => this.#scheduleFlush(active));
    this.#active.set(record.id, active);
    return active;
  }

  /** Resolves with the first final outcome, the session's end, or a timeout. */
  waitOutcome(sessionId: string, timeoutMs: number): Promise<OutcomeWait> {
    const active = this.#active.get(sessionId);
    if (!active) {
      return this.#opts.stores.sessions
        .get(sessionId)
        .then((session) =>
          session ? { kind: "ended", session } : { kind: "timeout" },
        ) as Promise<OutcomeWait>;
    }
    if (active.final) return Promise.resolve({ kind: "outcome", outcome: active.final });
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle({ kind: "timeout" }), timeoutMs);
      const settle = (w: OutcomeWait) => {
        clearTimeout(timer);
        active.waiters.delete(settle);
        resolve(w);
      };
      active.waiters.add(settle);
    });
  }

  /** The live log of a running session, or null when it is not running here. */
  live(sessionId: string): { record: SessionRecord; log: SessionLog } | null {
    const active = this.#active.get(sessionId);
    return active ? { record: active.record, log: active.log } : null;
  }

  /** Calls `onEnd` with the final record when the session ends (at once if it has). */
  onEnd(sessionId: string, onEnd: (record: SessionRecord) => void): () => void {
    const active = this.#active.get(sessionId);
    if (!active) return () => {};
    const waiter = (w: OutcomeWait) => {
      if (w.kind === "ended") onEnd(w.session);
      else active.waiters.add(waiter);
    };
    active.waiters.add(waiter);
    return () => active.waiters.delete(waiter);
  }

  /**
   * The record once the session has ended, wherever it runs: here, on another instance (told
   * over the bus), or already (read from storage).
   */
  async whenEnded(sessionId: string): Promise<SessionRecord | null> {
    if (this.#active.has(sessionId)) {
      return new Promise((resolve) => this.onEnd(sessionId, resolve));
    }
    const stored = await this.#opts.stores.sessions.get(sessionId);
    if (!stored || !this.#cluster.shared || !["running", "created"].includes(stored.state)) {
      return stored;
    }
    await new Promise<void>((resolve) => {
      const list = this.#remoteEnds.get(sessionId) ?? [];
      list.push(resolve);
      this.#remoteEnds.set(sessionId, list);
    });
    return this.#opts.stores.sessions.get(sessionId);
  }

  /** Stops a session. Resolves with its record once its process is gone. */
  async stop(sessionId: string): Promise<SessionRecord> {
    const active = this.#active.get(sessionId);
    if (!active) {
      const record = await this.#opts.stores.sessions.get(sessionId);
      if (!record) throw new HooklineError("not_found", `session "${sessionId}" not found`);
      if (!this.#cluster.shared || !["running", "created"].includes(record.state)) return record;
      // Another instance runs it: ask there, and wait (bounded) for its end.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10_000);
        const list = this.#remoteEnds.get(sessionId) ?? [];
        list.push(() => {
          clearTimeout(timer);
          resolve();
        });
        this.#remoteEnds.set(sessionId, list);
        this.#cluster.bus.publish("stop", { session_id: sessionId });
      });
      return (await this.#opts.stores.sessions.get(sessionId)) ?? record;
    }
    active.stopRequested = true;
    const ended = new Promise<SessionRecord>((resolve) => this.onEnd(sessionId, resolve));
    active.parked?.resolve();
    if (active.run) await active.run.stop();
    return ended;
  }

  async #run(active: Active, event: EventRecord): Promise<void> {
    const { record } = active;
    let end: SessionEnd;
    try {
      const doc = await this.#opts.stores.projects.get(record.project_id);
      if (!doc) throw new Error(`project ${record.project_id} is gone`);
      const build = await this.#build(record.build_id);
      if (record.durable && !active.journal) {
        active.journal = await this.#opts.stores.journals.list(record.id);
      }
      const journal = record.durable ? contiguous(active.journal ?? []) : [];
      restoreSubscriptions(this.subscriptions, record, doc, journal);
      if (active.stopRequested) {
        end = { state: "stopped" };
      } else {
        record.replayed_steps = journal.length;
        const detail = journal.length
          ? `resumed: replaying ${journal.length} journal steps`
          : undefined;
        // `running` once a process has it: until then it waits for a slot, still `created`.
        const started = () => this.#setState(active, "running", detail);
        const { env, redact } = sessionEnv(doc, this.#opts.secrets);
        active.redact = redact;
        const handlerEvent: HandlerEvent = {
          event_id: event.id,
          session_id: record.id,
          event_type: event.event_type,
          data: event.data,
        };
        active.run = this.#opts.runtime.run(
          {
            sessionId: record.id,
            projectId: record.project_id,
            buildId: record.build_id,
            entry: record.entry,
            event: handlerEvent,
            env,
            durable: record.durable,
            journal,
            workflowTimeoutMs: this.#opts.workflowTimeoutMs,
          },
          build,
          createHost(this.#hostContext, active, doc, started),
        );
        end = await active.run.done;
        if (active.parked && !active.stopRequested && !this.#disposed) {
          // Evicted while waiting: sleep without a process until the wait is journaled.
          await active.parked.wake;
          active.parked = null;
          active.run = null;
          if (!active.stopRequested && !this.#disposed) return this.#run(active, event);
          end = { state: active.stopRequested ? "stopped" : "crashed", message: "interrupted" };
        }
      }
    } catch (err) {
      this.#opts.log.error(`session ${record.id} could not run`, err);
      end = { state: "error", message: err instanceof Error ? err.message : String(err) };
    }
    if (end.state === "crashed" && record.durable && this.#disposed) {
      // The service is stopping: leave the session `running` so the next start resumes it.
      active.log.append({
        t: now(),
        kind: "warning",
        text: "service stopping; resumes at next start",
      });
      this.#persist(active);
      this.#active.delete(record.id);
      // Shared: let another instance claim it now rather than when the lease runs out.
      if (this.#cluster.shared) {
        void active.writes.then(() => this.#cluster.release(record.id)).catch(() => {});
      }
      for (const w of [...active.waiters]) w({ kind: "ended", session: record });
      return;
    }
    if (end.state === "crashed" && record.durable && !active.stopRequested) {
      if (record.attempts < MAX_RESUMES) {
        record.attempts++;
        active.log.append({
          t: now(),
          kind: "warning",
          text: `process died (${end.message}); resuming from the journal (attempt ${record.attempts})`,
        });
        active.run = null;
        return this.#run(active, event);
      }
    }
    this.#finish(active, end);
  }

  #finish(active: Active, end: SessionEnd) {
    const { record } = active;
    if (end.state === "completed" || end.state === "stopped") {
      this.#setState(active, end.state);
    } else if (end.state === "error") {
      record.error = {
        message: active.redact(end.message),
        ...(end.traceback ? { traceback: active.redact(end.traceback) } : {}),
      };
      this.#setState(active, "error", end.message);
    } else {
      const message = this.#disposed ? "interrupted" : `interrupted: ${end.message}`;
      record.error = { message };
      this.#setState(active, "error", message);
    }
    this.subscriptions.removeSession(record.id);
    this.#active.delete(record.id);
    for (const w of [...active.waiters]) w({ kind: "ended", session: record });
    const { onEnded } = this.#opts;
    if (onEnded) void active.writes.then(() => onEnded(record));
    if (this.#cluster.shared) {
      // Other instances read the record from storage: release once it is written.
      void active.writes.then(async () => {
        await this.#cluster.release(record.id).catch(() => {});
        this.#cluster.bus.publish("ended", { session_id: record.id });
      });
    }
  }

  #setState(active: Active, state: SessionState, detail?: string) {
    const { record } = active;
    const t = now();
    record.state = state;
    record.updated_at = t;
    if (state === "running" && !record.started_at) record.started_at = t;
    if (state === "completed" || state === "error" || state === "stopped") record.ended_at = t;
    active.log.append(detail ? { t, kind: "state", state, detail } : { t, kind: "state", state });
    this.#persist(active);
  }

  /** Queues a write of the record and log; writes of one session stay in order. */
  #persist(active: Active) {
    this.#write(active, true);
  }

  /** Writes the log (if it changed) and, with `withRecord`, the record, after earlier writes. */
  #write(active: Active, withRecord: boolean) {
    const record = withRecord ? { ...active.record } : null;
    const entries = active.log.dirty ? [...active.log.entries] : null;
    active.log.dirty = false;
    if (!record && !entries) return;
    const { stores, log } = this.#opts;
    const id = active.record.id;
    active.writes = active.writes
      .then(async () => {
        // The log first: whoever sees the record ended (another instance) finds its log whole.
        if (entries) await stores.logs.put(id, entries);
        if (record) await stores.sessions.put(record);
      })
      .catch((err) => log.error(`session ${id}: write failed`, err));
    this.#writes.add(active.writes);
    const written = active.writes;
    void written.finally(() => this.#writes.delete(written));
  }

  /** The log of a running session reaches storage within LOG_FLUSH_MS of a change. */
  #scheduleFlush(active: Active) {
    if (active.flushTimer) return;
    active.flushTimer = setTimeout(() => {
      active.flushTimer = null;
      this.#write(active, false);
    }, LOG_FLUSH_MS);
    active.flushTimer.unref();
  }

  async #build(id: string): Promise<BuildFiles> {
    const cached = this.#builds.get(id);
    if (cached) return cached;
    const rec: BuildRecord | null = await this.#opts.stores.builds.get(id);
    if (!rec) throw new Error(`build ${id} is gone`);
    const build = { id: rec.id, files: rec.files };
    // Keep the few most recent builds: sessions of one deployment share one.
    if (this.#builds.size >= 8) this.#builds.delete(this.#builds.keys().next().value!);
    this.#builds.set(id, build);
    return build;
  }

  /** Parks a durable session whose wait goes on past `evictAfterMs`. */
  #parkIfLong(active: Active, waiting: Promise<unknown>, waitMs: number) {
    const { evictAfterMs } = this.#opts;
    if (!active.record.durable || evictAfterMs < 0 || waitMs <= evictAfterMs) return;
    const timer = setTimeout(() => this.#park(active), evictAfterMs);
    void waiting.finally(() => clearTimeout(timer));
  }

  /** Evicts a durable session waiting in next_event: its process goes, its subscriptions stay. */
  #park(active: Active) {
    if (active.parked || !active.run || active.stopRequested || this.#disposed) return;
    let resolve = () => {};
    const wake = new Promise<void>((r) => {
      resolve = r;
    });
    active.parked = { wake, resolve };
    active.log.append({
      t: now(),
      kind: "warning",
      text: "waiting for an event: process released",
    });
    void active.run.stop();
  }

  /**
   * After a restart: non-durable sessions left running or created end in `error`
   * ("interrupted"); durable ones resume from their journal.
   */
  async recover(): Promise<{ resumed: number; interrupted: number }> {
    const counts = { resumed: 0, interrupted: 0 };
    if (this.#cluster.shared) {
      // Other instances may be running these sessions: take only those whose lease lapsed,
      // now and from time to time.
      const sweep = async () => {
        const orphans = await this.#cluster.orphans().catch(() => []);
        for (const id of orphans) await this.#adopt(id, counts);
      };
      await sweep();
      this.#sweeper = setInterval(() => void sweep(), this.#opts.sweepMs ?? 5000);
      this.#sweeper.unref();
      return counts;
    }
    for (const state of ["running", "created"] as const) {
      for (const rec of await this.#opts.stores.sessions.list({ state, limit: 100_000 })) {
        await this.#adopt(rec.id, counts);
      }
    }
    return counts;
  }

  /** Takes over a session nobody runs: a durable one resumes, another ends "interrupted". */
  async #adopt(id: string, counts: { resumed: number; interrupted: number }) {
    const { stores } = this.#opts;
    const rec = await stores.sessions.get(id);
    if (!rec || this.#active.has(id) || this.#disposed) return;
    if (rec.state !== "running" && rec.state !== "created") {
      // Ended, but its lease was never released: just tidy up.
      await this.#cluster.release(id);
      return;
    }
    const active = this.#track(rec, new SessionLog(await stores.logs.get(rec.id)));
    const event = await stores.events.get(rec.event_id);
    if (rec.durable && event) {
      counts.resumed++;
      active.log.append({ t: now(), kind: "warning", text: "owner stopped; resuming here" });
      void this.#run(active, event);
    } else {
      counts.interrupted++;
      this.#finish(active, { state: "error", message: "interrupted" });
    }
  }

  /** Call before the runtime is disposed: sessions cut short from now on are shutdown casualties. */
  shutdown(): void {
    this.#disposed = true;
  }

  /** Waits for every pending write. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    for (const off of this.#unsubscribe.splice(0)) off();
    while (this.#writes.size) await Promise.all([...this.#writes]);
  }

  /** Waits until every queued write has reached storage (tests, shutdown). */
  async flush(): Promise<void> {
    for (const a of this.#active.values()) {
      this.#write(a, false);
      await a.writes;
    }
  }
}
