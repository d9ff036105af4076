// A session that starts on the instance that accepted it (a synchronous request, a child's
// start(), a schedule, a manual run) is looked after from the moment its record exists: its
// lease and its place in the live set come before the record's first write. An instance that
// dies right after that write leaves the session to another instance's sweep, rather than
// stored `created` with nobody to find it. The session core over a real Redis cluster.
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { REDIS_URL, redisTestPrefix, warnIfNoRedis } from "../../test/support/redis.ts";
import { sessionsFixture } from "../../test/support/sessions.ts";
import { redisCluster } from "../cluster/cluster.ts";

const enabled = warnIfNoRedis("the lease-before-record test");

describe.skipIf(!enabled)("a session started here, on a shared Redis", () => {
  const redis = enabled ? new Redis(REDIS_URL!) : (null as unknown as Redis);
  afterAll(async () => {
    await redis?.quit();
  });

  it("is leased and in the live set before its record is first stored", async () => {
    const prefix = redisTestPrefix();
    const cluster = redisCluster(REDIS_URL!, prefix, { leaseMs: 15_000 });
    const f = await sessionsFixture({ sync_post: () => {} }, { cluster });
    const atFirstWrite: (string | null)[] = [];
    const commit = f.stores.sessions.commit.bind(f.stores.sessions);
    f.stores.sessions.commit = async (id, change) => {
      if (change.was === null) {
        const live = await redis.sismember(`${prefix}:live`, id);
        atFirstWrite.push(live ? await redis.get(`${prefix}:lease:${id}`) : null);
      }
      return commit(id, change);
    };
    try {
      const { outcome } = await f.startHeld("sync_post");
      await outcome(10_000);
      expect(atFirstWrite).toEqual([cluster.instanceId]);
    } finally {
      await f.manager.dispose();
      await cluster.dispose();
    }
  });
});
