/**
 * Time as the sessions and the scheduler see it: real in the service, driven by hand in unit
 * tests (`manualClock` in test/support/clock.ts).
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The wall clock. Its timers do not keep the process alive: the server does, and a stopping
 * service must not wait for a session's timer.
 * @example const clock = systemClock; clock.setTimeout(() => {}, 100);
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * An ISO timestamp of the clock's now, as log entries and records carry it.
 * @example isoNow(systemClock) // "2026-11-26T07:40:00.000Z"
 */
export function isoNow(clock: Clock): string {
  const ms = clock.now();
  // An accept stamps its event and record in the same millisecond: made once for them.
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString() };
  return lastIso.text;
}
let lastIso = { ms: Number.NaN, text: "" };

/**
 * Resolves at `until` (epoch ms of `clock`); long waits are chained, as timers top out near
 * 24.8 days.
 * @example await sleepUntil(systemClock, Date.now() + 1000);
 */
export function sleepUntil(clock: Clock, until: number): Promise<void> {
  return new Promise((resolve) => {
    const tick = () => {
      const left = until - clock.now();
      if (left <= 0) return resolve();
      clock.setTimeout(tick, Math.min(left, 2 ** 31 - 1));
    };
    tick();
  });
}
