import type { Logger } from "../log.ts";
import type { SessionRecord } from "../model/records.ts";
import type { Stores } from "../storage/stores.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { SessionLog } from "./session-log.ts";

/** How often a running session's log is written behind to storage. */
export const LOG_FLUSH_MS = 100;

interface Tracked {
  record: SessionRecord;
  log: SessionLog;
  /** The write running now (or the last one), for ordering and for `written`. */
  chain: Promise<void>;
  /** A write queued behind `chain`, not started: later requests merge into it. */
  queued: { withRecord: boolean } | null;
  timer: unknown;
  unlisten: () => void;
  closed: boolean;
}

export interface WriterOptions {
  stores: Pick<Stores, "sessions" | "logs">;
  log: Logger;
  clock?: Clock;
  flushMs?: number;
}

/**
 * Writes sessions' records and logs behind, off the request path. Per session the writes stay
 * in order, the log goes before the record (whoever sees a record ended finds its log whole),
 * and at most one write waits behind the running one: later requests merge into it, and it
 * takes what is current when it starts. A changed log reaches storage within `flushMs`.
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

  /** Starts writing `record` and `log` behind: changes of the log are flushed on a timer. */
  open(record: SessionRecord, log: SessionLog): void {
    const t: Tracked = {
      record,
      log,
      chain: Promise.resolve(),
      queued: null,
      timer: null,
      unlisten: () => {},
      closed: false,
    };
    t.unlisten = log.listen(() => this.#schedule(t));
    this.#tracked.set(record.id, t);
  }

  /** Queues a write of the record and the log (if it changed). */
  persist(id: string): void {
    const t = this.#tracked.get(id);
    if (t) this.#queue(t, true);
  }

  /**
   * The session is over here: no more timed flushes; writes queued so far still happen.
   * Resolves once they have.
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

  /** Resolves once the writes queued so far for the session have reached storage (or failed). */
  async written(id: string): Promise<void> {
    for (;;) {
      const t = this.#tracked.get(id);
      if (!t) return;
      const chain = t.chain;
      await chain;
      if (t.chain === chain) return;
    }
  }

  /** Writes every open session's changed log now, and waits for every queued write. */
  async flush(): Promise<void> {
    for (const t of this.#tracked.values()) if (!t.closed) this.#queue(t, false);
    await this.idle();
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

  /** Sessions with writes still tracked (open, or closed with writes under way). */
  get size(): number {
    return this.#tracked.size;
  }

  #schedule(t: Tracked): void {
    if (t.timer !== null || t.closed) return;
    t.timer = this.#clock.setTimeout(() => {
      t.timer = null;
      this.#queue(t, false);
    }, this.#opts.flushMs ?? LOG_FLUSH_MS);
  }

  #queue(t: Tracked, withRecord: boolean): void {
    if (t.queued) {
      t.queued.withRecord ||= withRecord;
      return;
    }
    if (!withRecord && !t.log.dirty) return;
    const queued = { withRecord };
    t.queued = queued;
    const { stores, log } = this.#opts;
    const id = t.record.id;
    t.chain = t.chain.then(async () => {
      t.queued = null;
      const entries = t.log.dirty ? [...t.log.entries] : null;
      t.log.dirty = false;
      const record = queued.withRecord ? { ...t.record } : null;
      try {
        if (entries) await stores.logs.put(id, entries);
        if (record) await stores.sessions.put(record);
      } catch (err) {
        log.error(`session ${id}: write failed`, err);
      }
    });
    this.#forgetWhenDone(t);
  }

  /** A closed session leaves the map once its last write is done. */
  #forgetWhenDone(t: Tracked): void {
    const chain = t.chain;
    void chain.then(() => {
      const id = t.record.id;
      if (t.closed && t.chain === chain && this.#tracked.get(id) === t) this.#tracked.delete(id);
    });
  }
}
