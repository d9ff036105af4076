import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { REDIS_URL, redisTestPrefix, warnIfNoRedis } from "../../test/support/redis.ts";
import { until } from "../../test/support/until.ts";
import { type Cluster, redisCluster } from "./cluster.ts";

const enabled = warnIfNoRedis("the cluster's lease tests");
const LEASE_MS = 600;

/**
 * Leases over the real Redis: renewed while held, taken back after a Redis that lost them, and
 * never taken from an instance that adopted the session while this one stalled.
 */
describe.skipIf(!enabled)("session leases (Redis)", () => {
  const redis = enabled ? new Redis(REDIS_URL!) : (null as unknown as Redis);
  const clusters: Cluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.dispose();
    await redis?.quit();
  });

  function instance(prefix: string) {
    const lost: [string, string][] = [];
    const onLost = (id: string, owner: string) => lost.push([id, owner]);
    const cluster = redisCluster(REDIS_URL!, prefix, { leaseMs: LEASE_MS, onLost });
    clusters.push(cluster);
    return { cluster, lost };
  }

  it("renews a held lease past its length, and puts back one Redis lost", async () => {
    const prefix = redisTestPrefix();
    const { cluster } = instance(prefix);
    expect(await cluster.claim("ses_a")).toBe(true);
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    expect(await redis.get(`${prefix}:lease:ses_a`)).toBe(cluster.instanceId);
    await redis.del(`${prefix}:lease:ses_a`, `${prefix}:live`);
    const back = async () => (await redis.get(`${prefix}:lease:ses_a`)) === cluster.instanceId;
    await until("the lease renewed after Redis lost it", back, 5000);
    expect(await redis.sismember(`${prefix}:live`, "ses_a")).toBe(1);
  });

  it("leaves a lease another instance took while it stalled, and says so", async () => {
    const prefix = redisTestPrefix();
    const { cluster, lost } = instance(prefix);
    expect(await cluster.claim("ses_b")).toBe(true);
    // What an adopter's claim leaves after this instance's lease ran out.
    await redis.set(`${prefix}:lease:ses_b`, "adopter", "PX", 60_000);
    await until("the lost lease told", () => lost.length > 0, 5000);
    expect(lost).toEqual([["ses_b", "adopter"]]);
    await new Promise((r) => setTimeout(r, LEASE_MS));
    expect(await redis.get(`${prefix}:lease:ses_b`)).toBe("adopter");
    // No longer held: releasing it leaves the adopter's lease in place.
    await cluster.release("ses_b");
    expect(await redis.get(`${prefix}:lease:ses_b`)).toBe("adopter");
  });
});

describe.skipIf(!enabled)("a released lease (Redis)", () => {
  const redis = enabled ? new Redis(REDIS_URL!) : (null as unknown as Redis);
  afterAll(async () => {
    await redis?.quit();
  });

  it("stays released: a renewal under way never puts it back", async () => {
    const prefix = redisTestPrefix();
    // Renewals every 10 ms, so that many of them meet a release.
    const cluster = redisCluster(REDIS_URL!, prefix, { leaseMs: 30 });
    const back: string[] = [];
    try {
      for (let i = 0; i < 300; i++) {
        const id = `ses_${i}`;
        await cluster.claim(id);
        await new Promise((r) => setTimeout(r, i % 7));
        await cluster.release(id);
        if ((await redis.exists(`${prefix}:lease:${id}`)) === 1) back.push(id);
      }
    } finally {
      await cluster.dispose();
    }
    expect(back, "leases put back after their release").toEqual([]);
  });
});
