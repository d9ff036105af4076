import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { REDIS_URL, redisTestPrefix, warnIfNoRedis } from "../../test/support/redis.ts";
import { until } from "../../test/support/until.ts";
import { redisWorkQueue, type WorkQueue } from "./work-queue.ts";

const enabled = warnIfNoRedis("the shared work queue's lease tests");
const LEASE_MS = 1500;

/**
 * A take runs a session only under its lease: over the real Redis, an entry whose session
 * another instance holds is taken off the queue and not run; every one that runs holds its
 * lease (this instance's id, in the live set, told to `leased` so it is renewed). Both for
 * entries read new and for entries reclaimed from an instance that died holding them.
 */
describe.skipIf(!enabled)("the shared work queue's take (Redis)", () => {
  const redis = enabled ? new Redis(REDIS_URL!) : (null as unknown as Redis);
  const queues: WorkQueue[] = [];
  afterAll(async () => {
    for (const q of queues) await q.dispose();
    await redis?.quit();
  });

  /** A queue of its own prefix for instance "me"; what it ran and what it was told it leased. */
  function setup() {
    const prefix = redisTestPrefix();
    const ran: string[] = [];
    const leased: string[] = [];
    const me = redisWorkQueue({
      url: REDIS_URL!,
      prefix,
      instanceId: "me",
      leaseMs: LEASE_MS,
      leased: (id) => leased.push(id),
    });
    queues.push(me);
    const serve = () =>
      me.serve(
        () => true,
        (item) => ran.push(item.session_id),
      );
    const lease = (id: string) => redis.get(`${prefix}:lease:${id}`);
    const holdElsewhere = (id: string) =>
      redis.set(`${prefix}:lease:${id}`, "other", "PX", 60_000).then(() => {});
    const live = (id: string) => redis.sismember(`${prefix}:live`, id);
    /** `taken` ran here under this instance's lease; `held` (another's) was not touched. */
    const onlyTaken = async (taken: string, held: string) => {
      expect(ran, "run: only the entry whose lease this take got").toEqual([taken]);
      expect(leased, "told to renew: the lease taken").toEqual([taken]);
      expect(await lease(taken), "the lease of the session run").toBe("me");
      expect(await lease(held), "another instance's lease, untouched").toBe("other");
      expect(
        [await live(taken), await live(held)],
        "in the live set: the session run, not the other",
      ).toEqual([1, 0]);
    };
    return { prefix, me, ran, serve, holdElsewhere, onlyTaken };
  }

  it("runs a new entry only with its lease, and drops one leased by another instance", async () => {
    const q = setup();
    await q.holdElsewhere("ses_held");
    await q.me.push({ session_id: "ses_held", record: {} });
    await q.me.push({ session_id: "ses_free", record: {} });
    q.serve();
    await until("ses_free run", () => q.ran.includes("ses_free"));
    await q.onlyTaken("ses_free", "ses_held");
    expect(await q.me.size()).toBe(0); // both taken off the queue
  });

  it("reclaims a dead reader's entries a lease time later, under the same rule", async () => {
    const q = setup();
    const stream = `${q.prefix}:stream:work`;
    await redis.xgroup("CREATE", stream, "workers", "0", "MKSTREAM");
    await q.holdElsewhere("ses_held");
    await q.me.push({ session_id: "ses_held", record: {} });
    await q.me.push({ session_id: "ses_orphan", record: {} });
    // Another instance reads both and dies before taking them: they are pending, its own.
    const read = await redis.xreadgroup(
      "GROUP",
      "workers",
      "dead",
      "COUNT",
      2,
      "STREAMS",
      stream,
      ">",
    );
    expect((read as [string, unknown[]][])[0]![1]).toHaveLength(2);
    q.serve();
    await until("ses_orphan run", () => q.ran.includes("ses_orphan"));
    // Both reclaimed (one per round, a third of a lease time apart): nothing is left pending.
    await until("both reclaimed entries taken off the stream", async () => {
      return (await redis.xlen(stream)) === 0;
    });
    await q.onlyTaken("ses_orphan", "ses_held");
  });
});
