import { HooklineError } from "../../errors.ts";

/** How much of each new interval between freed slots the estimate takes (EWMA). */
const INTERVAL_WEIGHT = 0.2;

interface Waiter {
  grant: () => void;
}

/**
 * A counting semaphore with a bounded queue in two lanes: sessions whose request is held
 * (synchronous webhooks) are served first, the others after them, each lane in FIFO order.
 * `acquire` resolves to a release function once a slot is free; it rejects at once when the
 * queue is full, and with the signal's reason when the signal aborts while waiting. It also
 * says how long a new waiter can expect to wait (`expectedWaitMs`), from the pace at which
 * slots came free while all were taken.
 */
export class Slots {
  readonly #max: number;
  readonly #maxWaiting: number;
  readonly #now: () => number;
  #running = 0;
  readonly #held: Waiter[] = [];
  readonly #queued: Waiter[] = [];
  /** When a slot last came free while all were taken (or when they all became taken). */
  #lastFreed = 0;
  /** The usual time between two slots coming free while all are taken, ms (0: not seen yet). */
  #interval = 0;

  readonly #onFull: ((full: boolean) => void) | undefined;
  #full = false;

  /** `onFull`: told when every slot is taken, and when one is free again. */
  constructor(
    max: number,
    maxWaiting: number,
    now: () => number = Date.now,
    onFull?: (full: boolean) => void,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxSessions must be >= 1: ${max}`);
    this.#max = max;
    this.#maxWaiting = maxWaiting;
    this.#now = now;
    this.#onFull = onFull;
  }

  /** Tells `onFull` when whether every slot is taken has changed. */
  #tell(): void {
    const full = this.#running >= this.#max;
    if (full === this.#full) return;
    this.#full = full;
    this.#onFull?.(full);
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#held.length + this.#queued.length;
  }

  /**
   * How long a session asking now would wait for a slot, ms: 0 while one is free; else its
   * place in the queue (a held one is behind the held ones only) times the usual time between
   * two slots coming free, or the time since the last one did, whichever is longer (slots held
   * by long sessions push the estimate up as they go on holding them).
   * @example if (slots.expectedWaitMs(true) > timeoutMs / 2) refuse();
   */
  expectedWaitMs(held = false): number {
    if (this.#running < this.#max) return 0;
    const ahead = this.#held.length + (held ? 0 : this.#queued.length);
    const since = this.#now() - this.#lastFreed;
    return (ahead + 1) * Math.max(this.#interval, since);
  }

  /**
   * `held`: a request waits for this session (it goes ahead of the others waiting).
   * @example const release = await slots.acquire(signal); try { … } finally { release(); }
   */
  acquire(signal?: AbortSignal, held = false): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.#max) {
      this.#running++;
      if (this.#running === this.#max) this.#lastFreed = this.#now();
      this.#tell();
      return Promise.resolve(this.#releaser());
    }
    if (this.waiting >= this.#maxWaiting) {
      return Promise.reject(
        new HooklineError(
          "unavailable",
          `too many sessions: ${this.#running} running and ${this.waiting} waiting`,
        ),
      );
    }
    const lane = held ? this.#held : this.#queued;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#releaser());
        },
      };
      const onAbort = () => {
        const i = lane.indexOf(waiter);
        if (i !== -1) lane.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      lane.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#freed();
      const next = this.#held.shift() ?? this.#queued.shift();
      // The slot passes straight to the next waiter, so `running` stays the same.
      if (next) next.grant();
      else {
        this.#running--;
        this.#tell();
      }
    };
  }

  /** A slot came free: while all were taken, the time since the last one tells the pace. */
  #freed(): void {
    if (this.#running < this.#max) return;
    const now = this.#now();
    const interval = now - this.#lastFreed;
    this.#interval =
      this.#interval === 0
        ? interval
        : this.#interval + INTERVAL_WEIGHT * (interval - this.#interval);
    this.#lastFreed = now;
  }
}
