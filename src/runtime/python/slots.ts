import { HooklineError } from "../../errors.ts";

/**
 * A counting semaphore with a bounded FIFO queue. `acquire` resolves to a release function once a
 * slot is free; it rejects at once when the queue is full, and with the signal's reason when the
 * signal aborts while waiting.
 */
export class Slots {
  readonly #max: number;
  readonly #maxWaiting: number;
  #running = 0;
  readonly #waiting: Array<{ grant: () => void }> = [];

  constructor(max: number, maxWaiting: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxSessions must be >= 1: ${max}`);
    this.#max = max;
    this.#maxWaiting = maxWaiting;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * @example const release = await slots.acquire(signal); try { … } finally { release(); }
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.#max) {
      this.#running++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiting.length >= this.#maxWaiting) {
      return Promise.reject(
        new HooklineError(
          "unavailable",
          `too many sessions: ${this.#running} running and ${this.#waiting.length} waiting`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#releaser());
        },
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(waiter);
        if (i !== -1) this.#waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter, so `running` stays the same.
      if (next) next.grant();
      else this.#running--;
    };
  }
}
