import { createHash } from "node:crypto";
import { Redis } from "ioredis";

/** How long the check-and-mark of a starting instance may hold its lock, at most. */
const LOCK_MS = 5000;

/** The command that moves a Redis store to PostgreSQL, named in the refusal (docs/cli.md). */
export const MOVE_COMMAND = "cli storage copy --from <this SVC_STORAGE> --to postgres://…";

/**
 * The name a Redis-stored instance gives its marker connection: one per `?base=` (a hash of it,
 * since a client name may hold no spaces).
 */
export function markerName(base: string): string {
  return `hookline-alone-${createHash("sha256").update(base).digest("hex").slice(0, 16)}`;
}

/**
 * Whether an instance holds the Redis store of `base` now: a connection named for it is open.
 * A process that died (kill -9 too) closed its connection with it, so it is not counted.
 * @example if (await storeInUse(redis, "hookline")) throw new Error("stop the service first");
 */
export async function storeInUse(redis: Redis, base: string): Promise<boolean> {
  const list = String(await redis.client("LIST"));
  const name = markerName(base);
  return list.split("\n").some((line) => line.includes(` name=${name} `));
}

/**
 * Redis as the only store serves one instance (CONTRACT.md, "Scale-out"): this instance's mark
 * on the store of `base` is a connection named for it (`CLIENT SETNAME`), held open while the
 * instance runs. A second instance finds it (`CLIENT LIST`) and is refused with one line that
 * names the command that moves the data to PostgreSQL. The mark goes with the connection, so a
 * restart right after kill -9 starts: no lease to wait out. Check and mark happen under a short
 * lock, so two instances starting at once do not both pass. `dispose()` takes the mark away.
 * @example const mark = await markRedisAlone({ url: "redis://127.0.0.1:6379", base: "hookline" });
 */
export async function markRedisAlone(target: {
  url: string;
  base: string;
}): Promise<{ dispose(): Promise<void> }> {
  const redis = new Redis(target.url, { maxRetriesPerRequest: 2, lazyConnect: true });
  redis.on("error", () => {});
  const name = markerName(target.base);
  const lock = `${target.base}:alone-lock`;
  const token = `${process.pid}:${Date.now()}`;
  try {
    await redis.connect();
    for (let tries = 0; (await redis.set(lock, token, "PX", LOCK_MS, "NX")) !== "OK"; tries++) {
      if (tries * 50 > LOCK_MS) throw new Error(`SVC_STORAGE: Redis lock ${lock} is held`);
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      if (await storeInUse(redis, target.base)) {
        throw new Error(
          `SVC_STORAGE: another instance is using this Redis store (base "${target.base}"); Redis as the only store serves one instance: to run several, move the data to PostgreSQL with \`${MOVE_COMMAND}\` and start every instance with SVC_STORAGE=postgres://… and SVC_REDIS_URL set to this Redis (docs/scale-out.md)`,
        );
      }
      await redis.client("SETNAME", name);
    } finally {
      await redis.eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
        1,
        lock,
        token,
      );
    }
  } catch (e) {
    redis.disconnect();
    throw e;
  }
  // A connection Redis dropped comes back under the same name.
  redis.on("ready", () => void redis.client("SETNAME", name).catch(() => {}));
  return {
    async dispose() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
