import { type Clock, systemClock } from "../clock.ts";
import type { Owners } from "../cluster/cluster.ts";
import type { Logger } from "../log.ts";
import type { EventRecord, JournalStep, SessionRecord, SessionState } from "../model/records.ts";
import { Fenced } from "../storage/fence.ts";
import type { Stores } from "../storage/records.ts";
import { isEnded } from "../storage/session-records.ts";
import type { SessionLog } from "./session-log.ts";
import { createSession, endAll } from "./writes-apart.ts";

/** How often a running session's log is written behind to storage. */
export const LOG_FLUSH_MS = 100;
/**
 * The longest wait between two tries of an ended session's last write while storage refuses it
 * (the waits double from 100 ms).
 */
export const RETRY_MAX_MS = 5000;

/** A journal step waiting for the write that stores it. */
interface PendingStep {
  step: JournalStep;
  stored: () => void;
  failed: (err: unknown) => void;
}

/** What the next write takes: the record, the log (if changed), journal steps. */
interface Queued {
  withRecord: boolean;
  withLog: boolean;
  steps: PendingStep[];
}

/** The state of a record in storage: null, none yet; undefined, not known. */
type Stored = SessionState | null | undefined;

interface Tracked {
  record: SessionRecord;
  log: SessionLog;
  stored: Stored;
  /** The write running now (or the last one), for ordering and for `written`. */
  chain: Promise<void>;
  /** A write queued behind `chain`, not started: later requests merge into it. */
  queued: Queued | null;
  timer: unknown;
  unlisten: () => void;
  closed: boolean;
  /** Taken over by another instance: nothing more is written (`discard`). */
  discarded: boolean;
  /** A closed session's failed write, to be tried again: resolves once it is queued again. */
  again: Promise<void> | null;
  /** Failed writes in a row. */
  failures: number;
}

export interface WriterOptions {
  stores: Pick<Stores, "sessions">;
  log: Logger;
  clock?: Clock;
  flushMs?: number;
  /**
   * A fleet on PostgreSQL: every write carries the session's owner and epoch and the database
   * refuses a stale one (`Fenced`): the session is then told lost (`owners.fenced`) and
   * nothing more of it is written from here. A new session's owner row comes with its first
   * write; its end removes it.
   */
  owners?: Pick<Owners, "create" | "write" | "forget" | "fenced">;
}

/**
 * Writes sessions' records, logs and journal steps behind, off the request path. Each write is
 * one commit (`stores.sessions.commit`): the journal steps waiting, the log, the record and its
 * index entry together, so a state change and the step that came with it are stored at once or
 * not at all. Per session the writes stay in order, and at most one write waits behind the
 * running one: later requests merge into it, and it takes what is current when it starts. A
 * changed log reaches storage within `flushMs`.
 * @example
 * const writer = new SessionWriter({ stores, log }); writer.open(record, sessionLog);
 * writer.persist(record.id); await writer.written(record.id);
 */
export class SessionWriter {
  #opts: WriterOptions;
  #clock: Clock;
  #tracked = new Map<string, Tracked>();

  constructor(opts: WriterOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
  }

  /**
   * Whether another instance may take a session over (a fleet): each write then carries this
   * instance's claim, and storage refuses it once the claim is gone.
   */
  get fenced(): boolean {
    return this.#opts.owners !== undefined;
  }

  /**
   * A new session's first write, before it is opened here: see `createSession`.
   * @example await writer.create(record, event); writer.open(record, log, record.state);
   */
  create(record: SessionRecord, event?: EventRecord, steps?: JournalStep[]): Promise<void> {
    return createSession(this.#opts, record, { event, steps });
  }

  /**
   * The ends of sessions not open here (recovery's interrupted ones): see `endAll`.
   * @example await writer.endAll([{ record, log }]);
   */
  endAll(ended: { record: SessionRecord; log: SessionLog }[]): Promise<void> {
    return endAll(this.#opts, ended);
  }

  /**
   * Writes `record` and `log` behind (the log flushed on a timer). `stored`: the record's state
   * in storage (null: a new session; undefined: not known), for its index entry's one removal.
   * `after`: nothing is written before it settles (another thread's first write, still on its
   * way, would overwrite one landing first).
   */
  open(record: SessionRecord, log: SessionLog, stored?: Stored, after?: Promise<void>): void {
    const t: Tracked = {
      record,
      log,
      stored,
      chain: after ?? Promise.resolve(),
      queued: null,
      timer: null,
      unlisten: () => {},
      closed: false,
      discarded: false,
      again: null,
      failures: 0,
    };
    t.unlisten = log.listen(() => this.#schedule(t));
    this.#tracked.set(record.id, t);
  }

  /** Queues a write of the record and the log (if it changed). */
  persist(id: string): void {
    const t = this.#tracked.get(id);
    if (t) this.#queue(t, { withRecord: true, withLog: true });
  }

  /**
   * Stores a journal step with the session's next write (a state change queued meanwhile goes
   * in the same commit). Resolves once it is stored; rejects if that write failed.
   */
  journal(id: string, step: JournalStep): Promise<void> {
    const t = this.#tracked.get(id);
    if (!t) {
      const own = this.#opts.owners?.write(id);
      return this.#opts.stores.sessions.commit(id, { steps: [step], ...(own && { own }) });
    }
    return new Promise<void>((stored, failed) => {
      this.#queue(t, { withRecord: false, withLog: false, step: { step, stored, failed } });
    });
  }

  /**
   * Another instance took the session over (a write was fenced, or this instance was declared
   * dead): from now on
   * nothing of it is written from here. A write under way finishes; those queued and later
   * ones are dropped (a journal step among them fails).
   */
  discard(id: string): void {
    const t = this.#tracked.get(id);
    if (t) t.discarded = true;
  }

  /**
   * The session is over here: no more timed flushes; writes queued so far still happen, and one
   * that fails is tried again (every RETRY_MAX_MS at most) until storage takes it, so that its
   * end is stored. Resolves once they have been stored.
   */
  close(id: string): Promise<void> {
    const t = this.#tracked.get(id);
    if (!t) return Promise.resolve();
    t.closed = true;
    t.unlisten();
    if (t.timer !== null) this.#clock.clearTimeout(t.timer);
    t.timer = null;
    this.#forgetWhenDone(t);
    return this.written(id);
  }

  /**
   * Resolves once the writes queued so far for the session have reached storage (or failed; a
   * closed session's once they are stored).
   */
  async written(id: string): Promise<void> {
    for (;;) {
      const t = this.#tracked.get(id);
      if (!t) return;
      const chain = t.chain;
      await chain;
      if (t.chain !== chain) continue;
      if (!t.again) return;
      await t.again;
    }
  }

  /** Waits until no write is queued or running (sessions may stay open). */
  async idle(): Promise<void> {
    for (;;) {
      const chains = [...this.#tracked.values()].map((t) => t.chain);
      await Promise.all(chains);
      const now = [...this.#tracked.values()].map((t) => t.chain);
      if (now.length === chains.length && now.every((c, i) => c === chains[i])) return;
    }
  }

  #schedule(t: Tracked): void {
    if (t.timer !== null || t.closed) return;
    t.timer = this.#clock.setTimeout(() => {
      t.timer = null;
      this.#queue(t, { withRecord: false, withLog: true });
    }, this.#opts.flushMs ?? LOG_FLUSH_MS);
  }

  #queue(t: Tracked, want: { withRecord: boolean; withLog: boolean; step?: PendingStep }): void {
    if (t.queued) {
      t.queued.withRecord ||= want.withRecord;
      t.queued.withLog ||= want.withLog;
      if (want.step) t.queued.steps.push(want.step);
      return;
    }
    if (!want.withRecord && !want.step && !t.log.dirty) return;
    const queued: Queued = {
      withRecord: want.withRecord,
      withLog: want.withLog,
      steps: want.step ? [want.step] : [],
    };
    t.queued = queued;
    const { stores, log } = this.#opts;
    const id = t.record.id;
    t.chain = t.chain.then(async () => {
      t.queued = null;
      const record = queued.withRecord ? { ...t.record } : undefined;
      // A fleet on PostgreSQL: the write carries the owner and epoch; an end frees the row.
      const owners = this.#opts.owners;
      const own = owners?.write(id, record !== undefined && isEnded(record.state));
      if (owners && !own) t.discarded = true; // no longer ours: nothing more from here
      if (t.discarded) {
        for (const p of queued.steps) p.failed(new Error("taken over by another instance"));
        return;
      }
      const entries = queued.withLog && t.log.dirty ? [...t.log.entries] : undefined;
      if (entries) t.log.dirty = false;
      const steps = queued.steps.map((p) => p.step);
      try {
        const change = { record, was: t.stored, log: entries, steps, ...(own && { own }) };
        await stores.sessions.commit(id, change);
        if (own?.kind === "fence" && own.release) owners?.forget(id);
        if (record) t.stored = record.state;
        t.failures = 0;
        for (const p of queued.steps) p.stored();
      } catch (err) {
        if (err instanceof Fenced) {
          // Taken over: the other instance's run is the one on record; this one stops here
          // (the cluster says so in the log).
          t.discarded = true;
          for (const p of queued.steps) p.failed(err);
          owners?.fenced(id);
          return;
        }
        log.error(`session ${id}: write failed`, err);
        if (record) t.stored = undefined; // what storage holds is not known now
        if (entries) t.log.dirty = true;
        for (const p of queued.steps) p.failed(err);
        if (t.closed) this.#tryAgain(t);
      }
    });
    this.#forgetWhenDone(t);
  }

  /** A closed session's last write failed: the record and log are written again, later. */
  #tryAgain(t: Tracked): void {
    const wait = Math.min(RETRY_MAX_MS, 100 * 2 ** t.failures++);
    t.again = new Promise((queued) => {
      this.#clock.setTimeout(() => {
        t.again = null;
        if (t.discarded) this.#forgetWhenDone(t);
        else this.#queue(t, { withRecord: true, withLog: true });
        queued();
      }, wait);
    });
  }

  /** A closed session leaves the map once its last write is done. */
  #forgetWhenDone(t: Tracked): void {
    const chain = t.chain;
    void chain.then(() => {
      const id = t.record.id;
      const done = t.closed && t.chain === chain && !t.again;
      if (done && this.#tracked.get(id) === t) this.#tracked.delete(id);
    });
  }
}
