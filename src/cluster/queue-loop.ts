/** How long the loop waits for a notification before it looks at the queue again by itself. */
export const POLL_MS = 1000;

/**
 * One instance's loop over PostgreSQL's queue of sessions: it takes while the instance has a
 * free slot, one at a time, at once while more are queued; then it waits for a NOTIFY, a `poke`
 * (a slot came free) or POLL_MS. A NOTIFY names the instance that is to take its session (the
 * one that accepted it, while it has a free slot: `named`), and the others let it pass: one
 * waker per queued session, not every instance. An instance named that has no slot when it
 * comes to take passes its sessions on with one NOTIFY that names nobody, which wakes every
 * instance; and every instance looks by itself every POLL_MS, so a queued session is taken while
 * any instance has a free slot.
 * @example const loop = new QueueLoop({ take, passOn }); loop.serve(free, run);
 */
export class QueueLoop<T extends { more: boolean }> {
  #o: { take: () => Promise<T | null>; passOn: () => Promise<void> };
  #wake: (() => void) | null = null;
  /** Woken while not waiting (busy taking): the next wait ends at once. */
  #woken = false;
  #free: (() => boolean) | null = null;
  /** Queued sessions this instance named itself the waker of and has not taken yet. */
  #owed = 0;
  /** Waiting for a free slot (not for a NOTIFY): a session's end is worth a look now. */
  #full = false;
  #stopped = false;
  #loop: Promise<void> | null = null;

  constructor(o: { take: () => Promise<T | null>; passOn: () => Promise<void> }) {
    this.#o = o;
  }

  /** Takes while `free()`, handing each session taken to `run`, until `stop`. */
  serve(free: () => boolean, run: (taken: T) => void): void {
    this.#free = free;
    this.#loop ??= (async () => {
      let failures = 0;
      while (!this.#stopped) {
        if (!free()) {
          await this.#passOn();
          this.#full = true;
          await this.#pause(250);
          this.#full = false;
          continue;
        }
        try {
          const taken = await this.#o.take();
          failures = 0;
          this.#owed = taken ? Math.max(0, this.#owed - 1) : 0;
          if (taken) run(taken);
          // More queued: the next at once; else a NOTIFY, a poke or the poll says when to look.
          if (taken?.more) continue;
        } catch {
          failures++;
        }
        await this.#pause(Math.min(POLL_MS * 2 ** failures, 5 * POLL_MS));
      }
    })();
  }

  /**
   * A session is being queued here: true when this instance has a free slot and names itself
   * the one to take it (its NOTIFY carries this instance's owner id); false: it wakes every one.
   */
  named(): boolean {
    if (this.#stopped || !this.#free?.()) return false;
    this.#owed++;
    return true;
  }

  /** A NOTIFY on the queue's channel: a session queued for `waker` (`me`, or "" for any). */
  notified(waker: string, me: string): void {
    if (waker === "" || waker === me) this.poke();
  }

  /**
   * A session here ended: if the loop was waiting for a free slot, it looks now. One that was
   * not (it had room, and waits for a NOTIFY) would find nothing more than before.
   */
  freed(): void {
    if (this.#full) this.poke();
  }

  /** A session was queued for this instance (or for any): look now. */
  poke(): void {
    if (this.#wake) this.#wake();
    else this.#woken = true; // busy taking: look again once done
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#loop?.catch(() => {});
  }

  /** Named the waker of sessions it has no slot for: every instance is woken for them. */
  async #passOn(): Promise<void> {
    if (this.#owed === 0) return;
    this.#owed = 0;
    await this.#o.passOn().catch(() => {});
  }

  #pause(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
