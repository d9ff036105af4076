// A clock driven by hand for the unit tests of the sessions and the scheduler.
/** A clock driven by hand, for unit tests of timed behaviour (see src/clock.ts). */
export interface ManualClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Moves time on by `ms`, firing due timers in order, letting promises settle after each. */
  advance(ms: number): Promise<void>;
  /** Timers not yet fired. */
  pending(): number;
}

/**
 * @example const clock = manualClock(); clock.setTimeout(f, 100); await clock.advance(100); // f ran
 */
export function manualClock(start = 1_800_000_000_000): ManualClock {
  let now = start;
  let ids = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++ids;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    async advance(ms) {
      const target = now + ms;
      await settle();
      for (;;) {
        const due = [...timers].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at);
        const first = due[0];
        if (!first) break;
        timers.delete(first[0]);
        now = first[1].at;
        first[1].fn();
        await settle();
      }
      now = target;
      await settle();
    },
    pending: () => timers.size,
  };
}
