// Vitest globalSetup: the Redis suites write under prefixes of their own (`redisTestPrefix` in
// ./redis.ts: `hookline-test-<run>-…`) and leave them there when they end. Over many runs a
// shared Redis would fill up, and every listing (a KEYS over the whole database) slows down. This
// names the run (HOOKLINE_TEST_RUN, inherited by the workers), and at its end removes the keys of
// this run only (another run on the same Redis may be going on), and those of runs older than
// six hours (runs that were killed).
import { Redis } from "ioredis";

const STALE_MS = 6 * 3600_000;

export default function setup(): () => Promise<void> {
  const started = Date.now();
  const run = `r${process.pid}x${started}`;
  process.env.HOOKLINE_TEST_RUN = run;
  return async () => {
    const url = process.env.REDIS_URL;
    if (!url) return;
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      let cursor = "0";
      const doomed: string[] = [];
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", "hookline-test-*", "COUNT", 1000);
        cursor = next;
        for (const key of keys) {
          if (key.startsWith(`hookline-test-${run}-`)) doomed.push(key);
          else if (runStartedAt(key) < started - STALE_MS) doomed.push(key);
        }
      } while (cursor !== "0");
      for (let i = 0; i < doomed.length; i += 1000) {
        await redis.unlink(...doomed.slice(i, i + 1000));
      }
    } catch (err) {
      console.warn(`could not remove this run's Redis test keys: ${(err as Error).message}`);
    } finally {
      redis.disconnect();
    }
  };
}

/** When the run that wrote `key` started (epoch ms), from its prefix; NaN when it names none. */
function runStartedAt(key: string): number {
  const prefix = key.split(":")[0] ?? "";
  return Number(/^hookline-test-r\d+x(\d{13})-/.exec(prefix)?.[1]);
}
