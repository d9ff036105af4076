import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
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
    // A Redis restarted without persistence: every key gone, its epoch with them.
    await redis.del(`${prefix}:lease:ses_a`, `${prefix}:live`, `${prefix}:epoch`);
    const back = async () => (await redis.get(`${prefix}:lease:ses_a`)) === cluster.instanceId;
    await until("the lease renewed after Redis lost it", back, 5000);
    expect(await redis.sismember(`${prefix}:live`, "ses_a")).toBe(1);
  });

  it("lets go a lease that went while Redis did not restart: lapsed, or released by an adopter", async () => {
    const prefix = redisTestPrefix();
    const { cluster, lost } = instance(prefix);
    expect(await cluster.claim("ses_r")).toBe(true);
    // An adopter took it while this instance stalled, ran it, and released it.
    await redis.del(`${prefix}:lease:ses_r`);
    await until("the lost lease told", () => lost.length > 0, 5000);
    expect(lost).toEqual([["ses_r", ""]]);
    await new Promise((r) => setTimeout(r, LEASE_MS));
    expect(await redis.exists(`${prefix}:lease:ses_r`)).toBe(0);
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
    // No longer held: releasing it leaves the adopter's lease in place, and the session among
    // those looked after (the adopter's death must leave it to a sweep).
    await cluster.release("ses_b");
    expect(await redis.get(`${prefix}:lease:ses_b`)).toBe("adopter");
    expect(await redis.sismember(`${prefix}:live`, "ses_b")).toBe(1);
  });

  it("after a stall, holds writes (fresh) until a renewal has told the leases lost", async () => {
    const prefix = redisTestPrefix();
    const { cluster } = instance(prefix);
    const told: string[] = [];
    cluster.onLost!((id) => told.push(`lost ${id}`));
    expect(await cluster.claim("ses_f")).toBe(true);
    await new Promise((r) => setTimeout(r, LEASE_MS / 2));
    expect(cluster.fresh!()).toBeNull(); // renewed and answered moments ago
    // Taken over while this instance stalls: its event loop blocked past half a lease.
    await redis.set(`${prefix}:lease:ses_f`, "adopter", "PX", 60_000);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LEASE_MS);
    const gate = cluster.fresh!();
    expect(gate).not.toBeNull();
    await gate!.then(() => told.push("writes go on"));
    expect(told).toEqual(["lost ses_f", "writes go on"]);
    expect(cluster.fresh!()).toBeNull();
  });

  it("hands out as orphans only free leases: never one its own queue took meanwhile", async () => {
    const prefix = redisTestPrefix();
    const { cluster } = instance(prefix);
    // This instance's queue takes the session (SET NX, on a connection of its own) at any point
    // of the sweep: after the sweep's k-th question to Redis is answered, for each k.
    for (let k = 1; k <= 8; k++) {
      const taken = `ses_taken_${k}`;
      await redis.sadd(`${prefix}:live`, `ses_dead_${k}`, taken);
      let asked = 0;
      let queueGotIt = false;
      const spies = (["smembers", "exists", "get", "eval"] as const).map((name) => {
        const real = Redis.prototype[name] as (...a: unknown[]) => Promise<unknown>;
        return vi.spyOn(Redis.prototype, name).mockImplementation(async function (
          this: Redis,
          ...args: unknown[]
        ) {
          const answer = await real.apply(this, args);
          if (this !== redis && ++asked === k) {
            const lease = `${prefix}:lease:${taken}`;
            queueGotIt = (await redis.set(lease, cluster.instanceId, "PX", 60_000, "NX")) === "OK";
          }
          return answer;
        } as never);
      });
      let orphans: string[];
      try {
        orphans = await cluster.orphans();
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
      expect(orphans).toContain(`ses_dead_${k}`);
      // Either the sweep took it first (the queue's take then failed), or the queue did.
      expect(orphans.includes(taken), `queue took it after question ${k}`).toBe(!queueGotIt);
    }
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
