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

/** A key prefix of its own per test run, so runs never see each other's data. */
export function redisTestUrl(): string {
  const base = `hookline-test-${process.pid}-${Date.now()}`;
  const url = new URL(REDIS_URL!);
  url.searchParams.set("base", base);
  return url.toString();
}
