import { type Clock, isoNow, systemClock } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { EventRecord, SessionRecord } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";
import type { SessionsHere } from "./context.ts";
import { type Abandoned, type Lifecycle, NEVER_STARTED } from "./lifecycle.ts";
import { SessionLog } from "./session-log.ts";
import { takeoverOf } from "./takeover.ts";
import { endUnreadable, findEntry, isSessionRecord } from "./unreadable.ts";

/**
 * Sessions interrupted in one storage commit, at most: a recovery of many writes one commit per
 * this many (each holds the session's whole log until then).
 */
export const INTERRUPT_BATCH = 500;
/**
 * Bytes of one such commit, at most: its sessions' records and logs as read, serialized as
 * storage stores them (their end adds a few hundred bytes each). A batch is written before a
 * session that would take it past this joins it, so large logs are not held 500 at a time; a
 * session larger than this alone is a commit of its own.
 */
export const INTERRUPT_BATCH_BYTES = 8 * 1024 * 1024;

/** Sessions read and found interrupted, waiting for their commit, and their size serialized. */
interface Interrupted {
  sessions: Abandoned[];
  bytes: number;
}
const noneYet = (): Interrupted => ({ sessions: [], bytes: 0 });

/**
 * A session's record and log as storage stores them (JSON, in UTF-8), as read: the end written
 * adds its error and one log entry.
 */
const storedBytes = (record: SessionRecord, log: SessionLog) =>
  Buffer.byteLength(JSON.stringify(record)) + Buffer.byteLength(JSON.stringify(log.entries));

export interface RecoveryCounts {
  /** Durable sessions resumed from their journal. */
  resumed: number;
  /** Sessions that never started, started now (or queued again where any instance takes them). */
  started: number;
  /** Sessions ended in `error`: interrupted while they ran, or never started for a lost request. */
  interrupted: number;
}

/**
 * Work left over by a stopped service or a dead instance. After a restart, a session that never
 * started (`created`) runs now, once; one that had started resumes from its journal if durable,
 * else ends in `error` ("interrupted"); a synchronous one that never started ends in `error`
 * (its request went with the instance that held it). This is the recovery of one instance; in a
 * fleet on PostgreSQL the coordinator queues what a dead instance left, and SharedWork takes it.
 * @example const recovery = new Recovery({ stores, cluster, lifecycle, here }); await recovery.recover();
 */
export class Recovery {
  #stores: Stores;
  #cluster: Cluster;
  #lifecycle: Lifecycle;
  #here: SessionsHere;
  #clock: Clock;
  #disposed = false;

  constructor(opts: {
    stores: Stores;
    cluster: Cluster;
    lifecycle: Lifecycle;
    here: SessionsHere;
    clock?: Clock;
  }) {
    this.#stores = opts.stores;
    this.#cluster = opts.cluster;
    this.#lifecycle = opts.lifecycle;
    this.#here = opts.here;
    this.#clock = opts.clock ?? systemClock;
  }

  /**
   * Takes over what nobody runs (at start). Resolves once the records it changed are stored
   * (sessions it interrupted); resumed ones go on running.
   */
  async recover(): Promise<RecoveryCounts> {
    const counts = { resumed: 0, started: 0, interrupted: 0 };
    // On PostgreSQL, what nobody runs is queued on its owner row and taken like any queued
    // session (SharedWork): the coordinator re-queues the sessions of dead instances.
    if (this.#cluster.owners) return counts;
    // The `running` and `created` entries of the index, every project's (an unreadable record
    // is found by its entry too): key ranges of their own where the store walks ranges, so a
    // start reads what is live, however many ended sessions are stored.
    const ids = new Set<string>();
    for (const state of ["running", "created"] as const) {
      for (const e of await this.#stores.sessionIndex.page({ state, limit: 100_000 }))
        ids.add(e.id);
    }
    const interrupted = noneYet();
    // Ids sort by time: the sessions that never started start in the order they came.
    for (const id of [...ids].sort()) await this.#adopt(id, counts, interrupted);
    await this.#interrupt(interrupted);
    return counts;
  }

  /** Stops taking sessions over (one under way is left as stored). Idempotent. */
  dispose(): void {
    this.#disposed = true;
  }

  /** Ends the sessions in `interrupted` (and empties it): one commit. */
  async #interrupt(interrupted: Interrupted): Promise<void> {
    if (interrupted.sessions.length === 0) return;
    const sessions = interrupted.sessions.splice(0);
    interrupted.bytes = 0;
    // Storage refused: they stay as stored, for the next start.
    await this.#lifecycle.interruptAll(sessions).catch(() => {});
  }

  /**
   * Adds a session to `interrupted`, which is written first if the session would take it past
   * INTERRUPT_BATCH_BYTES, and then if it holds INTERRUPT_BATCH sessions or that many bytes.
   */
  async #add(interrupted: Interrupted, session: Abandoned): Promise<void> {
    const bytes = storedBytes(session.record, session.log);
    if (interrupted.bytes + bytes > INTERRUPT_BATCH_BYTES) await this.#interrupt(interrupted);
    interrupted.sessions.push(session);
    interrupted.bytes += bytes;
    const full =
      interrupted.sessions.length >= INTERRUPT_BATCH || interrupted.bytes >= INTERRUPT_BATCH_BYTES;
    if (full) await this.#interrupt(interrupted);
  }

  /**
   * Takes over a session nobody runs: one that never started starts (a synchronous one ends,
   * its request gone), a durable one resumes, another is added to `interrupted`, which is
   * written (ended "interrupted") a batch at a time (see #add).
   */
  async #adopt(id: string, counts: RecoveryCounts, interrupted: Interrupted): Promise<void> {
    const rec: unknown = await this.#stores.sessions.get(id);
    if (this.#here.has(id)) return; // running here already
    if (!this.#lifecycle.taking || this.#disposed || !rec) return;
    if (!isSessionRecord(rec)) {
      const entry = await findEntry(this.#stores, id);
      if (entry)
        await endUnreadable(this.#stores, entry, "it is not a session record", isoNow(this.#clock));
      counts.interrupted++;
      return;
    }
    if (rec.state !== "running" && rec.state !== "created") return; // ended meanwhile
    const entries: unknown = await this.#stores.logs.get(rec.id);
    // A log that cannot be read: the session goes on with a new one rather than not at all.
    const log = new SessionLog(Array.isArray(entries) ? entries : []);
    const event = await this.#stores.events.get(rec.event_id);
    const next = takeoverOf(rec, event !== null);
    if (next === "never-started") {
      counts.interrupted++;
      await this.#add(interrupted, { record: rec, log, end: NEVER_STARTED });
    } else if (next === "resume" && event) {
      counts.resumed++;
      this.#lifecycle.resume(rec, log, event, "owner stopped; resuming here");
    } else if (next === "start" && event) {
      counts.started++;
      await this.#startAgain(rec, event, log);
    } else {
      counts.interrupted++;
      // Recovery resolves once what it changed is stored: a batch at a time.
      await this.#add(interrupted, { record: rec, log });
    }
  }

  /** A session that never started: it starts here now, with a line in its log saying why. */
  async #startAgain(record: SessionRecord, event: EventRecord, log: SessionLog): Promise<void> {
    const text = "the service stopped before this session started; starting it now";
    log.append({ t: isoNow(this.#clock), kind: "warning", text });
    return this.#lifecycle.startCreated(record, event, log);
  }
}
