// Vitest globalSetup: the Redis suites write under a prefix of their own per run
// (`hookline-test-…-<ms>`, see ./redis.ts) and leave it there when they end. Over many runs
// a shared Redis would fill up, and every listing (a KEYS over the whole database) slows down:
// at the end of a run, remove the prefixes this run made, and any older than six hours (runs
// that were killed).
import { Redis } from "ioredis";

const STALE_MS = 6 * 3600_000;

export default function setup(): () => Promise<void> {
  const started = Date.now();
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
          const at = Number(/^hookline-test-[^:]*-(\d{13})(:|$)/.exec(key)?.[1]);
          if (at >= started - 1000 || at < started - STALE_MS) doomed.push(key);
        }
      } while (cursor !== "0");
      for (let i = 0; i < doomed.length; i += 1000)
        await redis.unlink(...doomed.slice(i, i + 1000));
    } catch (err) {
      console.warn(`could not remove this run's Redis test keys: ${(err as Error).message}`);
    } finally {
      redis.disconnect();
    }
  };
}
