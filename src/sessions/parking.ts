import { type Clock, isoNow, systemClock } from "../clock.ts";
import type { SessionLog } from "./session-log.ts";

/** A session as parking sees it. */
export interface Parkable {
  id: string;
  durable: boolean;
  log: SessionLog;
  /** Whether its process may be released now (it runs, and nobody is stopping it). */
  canPark(): boolean;
  /** Releases its process; the session itself goes on. */
  release(): void;
}

interface Parked {
  wake: Promise<void>;
  resolve: () => void;
}

/**
 * Eviction of durable sessions that wait long (next_event, a durable timer): past
 * `evictAfterMs` the process is released, the subscriptions stay, and the session sleeps
 * without a process until its wait is on record; then a replay resumes it.
 * @example
 * const parking = new Parking({ evictAfterMs: 2000 });
 * parking.watch(session, waiting, 60_000); // releases the process after 2 s if still waiting
 */
export class Parking {
  #evictAfterMs: number;
  #clock: Clock;
  #parked = new Map<string, Parked>();

  /** `evictAfterMs` negative: never. */
  constructor(opts: { evictAfterMs: number; clock?: Clock }) {
    this.#evictAfterMs = opts.evictAfterMs;
    this.#clock = opts.clock ?? systemClock;
  }

  /**
   * Parks `session` if `waiting` (expected to last `waitMs`) goes on past the eviction delay;
   * `what` it waits for, as its log says (`waiting <what>: process released`).
   */
  watch(session: Parkable, waiting: Promise<unknown>, waitMs: number, what = "for an event"): void {
    const after = this.#evictAfterMs;
    if (!session.durable || after < 0 || waitMs <= after) return;
    const timer = this.#clock.setTimeout(() => this.#park(session, what), after);
    void waiting.finally(() => this.#clock.clearTimeout(timer));
  }

  /** Sessions parked now (`/metrics`). */
  get size(): number {
    return this.#parked.size;
  }

  /**
   * Resolves when a parked session's wait is on record (or it is stopped); null when it is not
   * parked. It stays parked until `forget`.
   */
  woken(id: string): Promise<void> | null {
    return this.#parked.get(id)?.wake ?? null;
  }

  /** The wait is on record, or the session is stopping: whoever waits in `woken` goes on. */
  wake(id: string): void {
    this.#parked.get(id)?.resolve();
  }

  /** The session runs again (or ended). */
  forget(id: string): void {
    this.#parked.delete(id);
  }

  #park(session: Parkable, what: string): void {
    if (this.#parked.has(session.id) || !session.canPark()) return;
    let resolve = () => {};
    const wake = new Promise<void>((r) => {
      resolve = r;
    });
    this.#parked.set(session.id, { wake, resolve });
    session.log.append({
      t: isoNow(this.#clock),
      kind: "warning",
      text: `waiting ${what}: process released`,
    });
    session.release();
  }
}
