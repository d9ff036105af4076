import { isoNow } from "../clock.ts";
import type {
  EventRecord,
  JournalStep,
  SessionEnd,
  SessionRecord,
  SessionState,
} from "../model/records.ts";
import type { SessionRun } from "../runtime/runtime.ts";
import { backfill } from "./backfill.ts";
import { createHost } from "./host.ts";
import { SessionJournal } from "./journal.ts";
import type { LifecycleDeps, LifecycleEvent } from "./lifecycle-deps.ts";
import type { Parkable } from "./parking.ts";
import { openStep, sealStep, sessionEnv } from "./session-env.ts";
import { SessionLog } from "./session-log.ts";
import { finalState, newSessionRecord, type StartInput, sessionSpec } from "./session-record.ts";
import { shutdownLoss } from "./shutdown-loss.ts";

export type { LifecycleDeps, LifecycleEvent } from "./lifecycle-deps.ts";
export type { StartInput } from "./session-record.ts";

/** A durable session whose process dies is resumed this many times, then fails. */
export const MAX_RESUMES = 3;

/** A session this instance runs (or holds parked). Only the lifecycle changes it. */
interface Live {
  record: SessionRecord;
  log: SessionLog;
  /** Null until read from storage (a session adopted after a restart). */
  journal: SessionJournal | null;
  run: SessionRun | null;
  stopRequested: boolean;
  redact: (text: string) => string;
  parkable: Parkable;
}

/**
 * The lifecycle of the sessions running here: created → running → completed | error | stopped,
 * a crashed durable session resumed from its journal (at most MAX_RESUMES times), a parked one
 * resumed once its wait is on record. Hands each run to the runtime with a host made of the
 * other pieces.
 * @example const record = lifecycle.start(input); const ended = await lifecycle.stop(record.id);
 */
export class Lifecycle {
  #d: LifecycleDeps;
  #live = new Map<string, Live>();
  #closing = false;
  #listeners = new Set<(e: LifecycleEvent) => void>();

  constructor(deps: LifecycleDeps) {
    this.#d = deps;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Durable sessions parked here: alive, without a process. */
  get parked(): number {
    return this.#d.parking.size;
  }

  /** The record and log of a session running here, or null. */
  get(id: string): { record: SessionRecord; log: SessionLog } | null {
    const s = this.#live.get(id);
    return s ? { record: s.record, log: s.log } : null;
  }

  hasCapacity(): boolean {
    return !this.#closing && this.#live.size < this.#d.maxActive;
  }

  /** Sessions cut short from now on are casualties of the service stopping. */
  shutdown(): void {
    this.#closing = true;
  }

  get closing(): boolean {
    return this.#closing;
  }

  listen(listener: (e: LifecycleEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Creates the session record and starts the session in the background. */
  start(input: StartInput): SessionRecord {
    const record = newSessionRecord(input, isoNow(this.#d.clock));
    this.startCreated(record, input.event);
    return record;
  }

  /** Starts a session whose record was created before (by the instance that queued it). */
  startCreated(record: SessionRecord, event: EventRecord): void {
    // A new session's journal is empty: no read.
    const s = this.#track(record, new SessionLog(), this.#journal(record, []));
    this.#d.writer.persist(record.id);
    this.#emit(s, "started");
    void this.#run(s, event);
  }

  /** Takes over a durable session nobody runs (after a restart, or its owner died). */
  resume(record: SessionRecord, log: SessionLog, event: EventRecord, note: string): void {
    const s = this.#track(record, log, null);
    log.append({ t: isoNow(this.#d.clock), kind: "warning", text: note });
    void this.#run(s, event);
  }

  /** Ends a session nobody runs and that cannot resume: `error`, "interrupted". */
  interrupt(record: SessionRecord, log: SessionLog): void {
    this.#finish(this.#track(record, log, null), { state: "error", message: "interrupted" });
  }

  /** Stops a session running here: its record once its process is gone; null if not here. */
  stop(id: string): Promise<SessionRecord> | null {
    const s = this.#live.get(id);
    if (!s) return null;
    s.stopRequested = true;
    const ended = new Promise<SessionRecord>((resolve) => this.#d.outcomes.onEnd(id, resolve));
    this.#d.parking.wake(id);
    return (async () => {
      if (s.run) await s.run.stop();
      return ended;
    })();
  }

  #journal(record: SessionRecord, steps: JournalStep[]): SessionJournal {
    return new SessionJournal({
      durable: record.durable,
      steps: steps.map((step) => openStep(this.#d.secrets, step)),
      store: (step) => this.#d.writer.journal(record.id, sealStep(this.#d.secrets, step)),
    });
  }

  #track(record: SessionRecord, log: SessionLog, journal: SessionJournal | null): Live {
    const s: Live = {
      record,
      log,
      journal,
      run: null,
      stopRequested: false,
      redact: (text) => text,
      parkable: {
        id: record.id,
        durable: record.durable,
        log,
        canPark: () => s.run !== null && !s.stopRequested && !this.#closing,
        release: () => void s.run?.stop(),
      },
    };
    this.#live.set(record.id, s);
    // Only start() brings a journal, for a record not stored yet; others adopt a stored one.
    this.#d.writer.open(record, log, journal ? null : record.state);
    this.#d.outcomes.open(record.id, { eventId: record.event_id, isSync: record.is_sync });
    return s;
  }

  async #run(s: Live, event: EventRecord): Promise<void> {
    const { record } = s;
    const d = this.#d;
    let end: SessionEnd;
    try {
      const doc = await d.stores.projects.get(record.project_id);
      if (!doc) throw new Error(`project ${record.project_id} is gone`);
      const build = await d.builds.get(record.build_id);
      const adopted = !s.journal;
      if (!s.journal) {
        const steps = record.durable ? await d.stores.journals.list(record.id) : [];
        s.journal = this.#journal(record, steps);
      }
      const journal = s.journal.begin();
      const reopened = s.journal.restoreSubscriptions(d.subscriptions, record.id, doc);
      if (adopted && d.history) {
        // Events published while nobody ran it (its owner died) reach it all the same.
        await backfill(d.history, d.subscriptions, s.journal, reopened);
      }
      if (s.stopRequested) {
        end = { state: "stopped" };
      } else {
        record.replayed_steps = journal.length;
        const detail = journal.length
          ? `resumed: replaying ${journal.length} journal steps`
          : undefined;
        const { env, redact } = sessionEnv(doc, d.secrets);
        s.redact = redact;
        const spec = sessionSpec(record, event, env, journal, d.workflowTimeoutMs);
        const { parkable, log } = s;
        const { outcomes, subscriptions, parking, clock } = d;
        const persist = () => d.writer.persist(record.id);
        const sdk = d.sdk?.forSession({ record, doc, log, parking, parkable, persist });
        const host = createHost({
          ...{ record, log, redact, parkable, journal: s.journal, doc, outcomes, subscriptions },
          ...{ parking, persist, clock, sdk },
          // `running` once a process has it: until then it waits for a slot, still `created`.
          started: () => this.#setState(s, "running", detail),
        });
        s.run = d.runtime.run(spec, build, host);
        end = await s.run.done;
        // Steps still being stored (an outcome just before the end) belong to this run.
        await s.journal.settled();
        const woken = d.parking.woken(record.id);
        if (woken && !s.stopRequested && !this.#closing) {
          // Evicted while waiting: sleep without a process until the wait is journaled.
          await woken;
          d.parking.forget(record.id);
          s.run = null;
          if (!s.stopRequested && !this.#closing) return this.#run(s, event);
          end = { state: s.stopRequested ? "stopped" : "crashed", message: "interrupted" };
        }
      }
    } catch (err) {
      d.log.error(`session ${record.id} could not run`, err);
      end = { state: "error", message: err instanceof Error ? err.message : String(err) };
    }
    end = shutdownLoss(end, this.#closing && !s.stopRequested);
    if (end.state === "crashed" && record.durable && this.#closing) return this.#leave(s);
    if (end.state === "crashed" && record.durable && !s.stopRequested) {
      if (record.attempts < MAX_RESUMES) {
        record.attempts++;
        s.log.append({
          t: isoNow(d.clock),
          kind: "warning",
          text: `process died (${end.message}); resuming from the journal (attempt ${record.attempts})`,
        });
        s.run = null;
        return this.#run(s, event);
      }
    }
    this.#finish(s, end);
  }

  /** The service is stopping: leave the session `running` so the next start resumes it. */
  #leave(s: Live): void {
    const { record } = s;
    s.log.append({
      t: isoNow(this.#d.clock),
      kind: "warning",
      text: "service stopping; resumes at next start",
    });
    this.#d.writer.persist(record.id);
    this.#forget(s);
    this.#emit(s, "left");
  }

  #finish(s: Live, end: SessionEnd): void {
    const { record } = s;
    const { state, detail, error } = finalState(end, this.#closing, s.redact);
    if (error) record.error = error;
    this.#setState(s, state, detail);
    this.#d.subscriptions.removeSession(record.id);
    this.#forget(s);
    this.#emit(s, "ended");
  }

  /** The session is no longer here: whoever waits on it is told, its writes are closed. */
  #forget(s: Live): void {
    const id = s.record.id;
    this.#live.delete(id);
    this.#d.parking.forget(id);
    this.#d.outcomes.end(id, s.record);
  }

  #emit(s: Live, type: LifecycleEvent["type"]): void {
    const written =
      type === "started" ? this.#d.writer.written(s.record.id) : this.#d.writer.close(s.record.id);
    for (const l of this.#listeners) l({ type, record: s.record, written });
  }

  #setState(s: Live, state: SessionState, detail?: string): void {
    const { record } = s;
    const t = isoNow(this.#d.clock);
    record.state = state;
    record.updated_at = t;
    if (state === "running" && !record.started_at) record.started_at = t;
    if (state === "completed" || state === "error" || state === "stopped") record.ended_at = t;
    s.log.append(detail ? { t, kind: "state", state, detail } : { t, kind: "state", state });
    this.#d.writer.persist(record.id);
  }
}
