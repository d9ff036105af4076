import { type Clock, systemClock } from "../clock.ts";
import { HooklineError } from "../errors.ts";
import { RunGone } from "../events/subscriptions.ts";

/** A signal as `next_signal` returns it: its name and payload (the SDK's wire form). */
export interface SignalMessage {
  name: string;
  payload: unknown;
}

/** Signals queued for one session; past it `signal()` to that session is refused. */
export const MAX_QUEUED_SIGNALS = 1000;

interface Waiter {
  names: Set<string>;
  resolve: (s: SignalMessage | null) => void;
  /** Ends the wait without a signal: its run is gone. */
  abandon: () => void;
}

interface Box {
  queue: SignalMessage[];
  waiter: Waiter | null;
}

/**
 * The signal queues of the sessions running on this instance: one FIFO per session, in the
 * order signals arrived. `next(names)` takes the oldest queued signal with one of the names
 * (others stay queued, in order, for a later `next`), or waits for one. A queue holds at most
 * MAX_QUEUED_SIGNALS: one more is refused (`push` throws, the sender's `signal()` raises
 * ValueError). A session's queue goes when the session ends or leaves this instance.
 * @example
 * const signals = new SignalQueues();
 * signals.push("ses_1", { name: "done", payload: 1 }); await signals.next("ses_1", ["done"], null);
 */
export class SignalQueues {
  #boxes = new Map<string, Box>();
  #clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  #box(id: string): Box {
    let box = this.#boxes.get(id);
    if (!box) {
      box = { queue: [], waiter: null };
      this.#boxes.set(id, box);
    }
    return box;
  }

  /**
   * Queues a signal for a session running here (the caller checks that), or hands it to the
   * session's waiting `next`. Throws when the queue is full.
   */
  push(id: string, signal: SignalMessage): void {
    const box = this.#box(id);
    if (box.waiter?.names.has(signal.name)) {
      const { resolve } = box.waiter;
      box.waiter = null;
      resolve(signal);
      return;
    }
    if (box.queue.length >= MAX_QUEUED_SIGNALS) {
      throw new HooklineError(
        "conflict",
        `signal: session "${id}" already has ${MAX_QUEUED_SIGNALS} signals waiting to be read (the limit); this one was not delivered`,
      );
    }
    box.queue.push(signal);
  }

  /**
   * The oldest queued signal with one of `names`, else the first to arrive within `timeoutMs`
   * (null: no limit), else null. One wait per session at a time (a session has one workflow
   * thread): a new wait replaces the old one, which then never answers. It belongs to a run
   * whose process is gone (a resume asks again), and answering it would record a step that
   * run can no longer take.
   */
  next(id: string, names: string[], timeoutMs: number | null): Promise<SignalMessage | null> {
    const box = this.#box(id);
    const wanted = new Set(names);
    const at = box.queue.findIndex((s) => wanted.has(s.name));
    if (at >= 0) return Promise.resolve(box.queue.splice(at, 1)[0]!);
    if (timeoutMs === 0) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const done = () => {
        if (timer !== null) this.#clock.clearTimeout(timer);
        if (box.waiter === waiter) box.waiter = null;
      };
      const waiter: Waiter = {
        names: wanted,
        resolve: (s) => {
          done();
          resolve(s);
        },
        abandon: () => {
          done();
          reject(new RunGone());
        },
      };
      const timer =
        timeoutMs === null
          ? null
          : this.#clock.setTimeout(() => {
              if (box.waiter === waiter) waiter.resolve(null);
            }, timeoutMs);
      box.waiter = waiter;
    });
  }

  /**
   * Gives up the session's pending `next` (its process died and a new run replays it): it takes
   * no signal and records nothing; signals that come from now on wait in the queue for the new
   * run's own `next`.
   */
  abandonWait(id: string): void {
    this.#boxes.get(id)?.waiter?.abandon();
  }

  /** The session ended or left: its queue goes, a waiting `next` gets null. */
  close(id: string): void {
    const box = this.#boxes.get(id);
    this.#boxes.delete(id);
    box?.waiter?.resolve(null);
  }
}
