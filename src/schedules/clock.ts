/** Time and timers for the scheduler; tests pass a clock they move by hand. */
export interface SchedulerClock {
  now(): number;
  /** Calls `fn` after `ms`; the timer must not keep the process alive. */
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** The real clock: unref'd timers, so a pending firing never holds the process open. */
export const systemSchedulerClock: SchedulerClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
