/**
 * The Redis tests use: `REDIS_URL`. Without it those tests skip, and say so once, loudly;
 * `.ci/run` sets it so CI never skips them.
 */
export const REDIS_URL = process.env.REDIS_URL;

let warned = false;
export function warnIfNoRedis(what: string): boolean {
  if (REDIS_URL) return true;
  if (!warned) {
    warned = true;
    console.warn(`\n*** REDIS_URL is not set: SKIPPING ${what} (set REDIS_URL to run them) ***\n`);
  }
  return false;
}

let made = 0;

/**
 * A key prefix of its own for each caller: `hookline-test-<run>-<pid>-<n>`, where `<run>` names
 * this vitest run (set by ./redis-cleanup.ts, which removes the run's keys at its end and never
 * another run's) and `<pid>-<n>` this caller.
 * @example const base = redisTestPrefix(); // "hookline-test-r4321x1795690000000-4400-1"
 */
export function redisTestPrefix(): string {
  const run = process.env.HOOKLINE_TEST_RUN ?? `r${process.pid}x${Date.now()}`;
  return `hookline-test-${run}-${process.pid}-${++made}`;
}

/** A storage URL on a key prefix of its own (`redisTestPrefix`), so runs never see each other's data. */
export function redisTestUrl(): string {
  const base = redisTestPrefix();
  const url = new URL(REDIS_URL!);
  url.searchParams.set("base", base);
  return url.toString();
}
