/** How often sessions waiting out a burst look whether it is over. */
const LOOK_MS = 2;

/**
 * Whether the front door is taking requests now, whether it has taken two or more at once since
 * it was last asked (a burst; asking clears it), and how long a session waits for it at most.
 */
export interface FrontBurst {
  busy: () => boolean;
  crowded: () => boolean;
  maxMs: number;
}

/**
 * Sessions that wait to begin while the front door is taking requests (`SVC_BURST_YIELD`): they
 * begin once a look (every LOOK_MS) finds the front not busy and it has not worked on two
 * requests at once since the look before (a burst is over once it has been that quiet for a
 * whole look; one client's requests one after the other never crowd it), or once the first of
 * them has waited `maxMs`, all of them then, in the order they came. A burst's accepts keep the
 * cores meanwhile, and what a session's run builds before its process (its environment, host
 * and journal, its place in the runtime's queue: some 14 KiB) is not made, nor copied by the
 * collector, while the burst lasts. Bounded by the sessions tracked here (the front admits no
 * more than the lifecycle's `maxActive`).
 * @example const wait = new BurstWait(burst, (s) => begin(s)); wait.add(id, s);
 */
export class BurstWait<T> {
  readonly #burst: FrontBurst;
  readonly #begin: (item: T) => void;
  readonly #now: () => number;
  readonly #waiting = new Map<string, T>();
  /** When the first of those waiting came. */
  #since = 0;
  #look: NodeJS.Timeout | null = null;

  constructor(burst: FrontBurst, begin: (item: T) => void, now: () => number = Date.now) {
    this.#burst = burst;
    this.#begin = begin;
    this.#now = now;
  }

  get size(): number {
    return this.#waiting.size;
  }

  /**
   * `item` (session `id`) begins now while the front is not busy and none waits; else it waits
   * with the others, and a look decides. A burst's hand-overs come by the thousand: each finding
   * the front idle for an instant (its answers out, the client's next requests not in yet) would
   * begin every waiting session in the middle of the burst; a look, every LOOK_MS, is one chance.
   */
  add(id: string, item: T): void {
    if (this.#waiting.size === 0 && !this.#burst.busy()) {
      this.#begin(item);
      return;
    }
    if (this.#waiting.size === 0) {
      this.#since = this.#now();
      this.#burst.crowded(); // what crowded the front before this wait is not its business
    }
    this.#waiting.set(id, item);
    this.#schedule();
  }

  /** Session `id` begins now if it waits (a stop, a fence); false if it does not wait. */
  take(id: string): boolean {
    const item = this.#waiting.get(id);
    if (item === undefined) return false;
    this.#waiting.delete(id);
    this.#begin(item);
    return true;
  }

  /** Every waiting session begins now, in the order they came (the service drains). */
  flush(): void {
    for (const item of this.clear()) this.#begin(item);
  }

  /** Every waiting session, in the order they came, taken out unbegun (the service stops). */
  clear(): T[] {
    if (this.#look) clearTimeout(this.#look);
    this.#look = null;
    const all = [...this.#waiting.values()];
    this.#waiting.clear();
    return all;
  }

  #schedule(): void {
    if (this.#look) return;
    this.#look = setTimeout(() => {
      this.#look = null;
      if (!this.#waiting.size) return;
      const waited = this.#now() - this.#since;
      // A burst's client may pause between answers (kept from a core a few ms): the front is
      // idle at that instant, but if it worked on two at once since the last look, the burst
      // goes on, and so does the wait.
      const crowded = this.#burst.crowded();
      if ((!this.#burst.busy() && !crowded) || waited >= this.#burst.maxMs) this.flush();
      else this.#schedule();
    }, LOOK_MS);
    this.#look.unref?.();
  }
}
