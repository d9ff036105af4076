import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoFleet,
} from "../../test/support/postgres.ts";
import { REDIS_URL, redisTestUrl } from "../../test/support/redis.ts";
import { markRedisAlone } from "../cluster/redis-alone.ts";
import { copyStore } from "./copy.ts";
import { createStorageFromUrl, redisTarget } from "./driver.ts";
import { FORMAT_KEY, FORMAT_VERSION } from "./format.ts";
import { createStores } from "./records.ts";

// `cli storage copy`'s work over a real Redis and PostgreSQL: what is copied, what is left
// behind, and what is refused with nothing written.

describe.skipIf(!warnIfNoFleet("the storage copy tests"))("copyStore", () => {
  afterAll(dropPostgresTestTables);

  /** A Redis store holding a project, a journal step, and what is not data beside them. */
  async function redisStore() {
    const url = redisTestUrl();
    const storage = createStorageFromUrl(url);
    await storage.setItem(FORMAT_KEY, FORMAT_VERSION);
    await storage.setItem("projects:prj_1", { project: { id: "prj_1" } });
    await storage.setItem("journals:ses_1:00000000", { seq: 0, kind: "sleep" });
    await storage.setItem("lease:ses_1", "an-instance"); // a Redis fleet's lease of old
    await storage.dispose();
    const { base } = redisTarget(url)!;
    const redis = new Redis(REDIS_URL!);
    await redis.xadd(`${base}:stream:events`, "*", "m", "{}"); // the bus's, not a record
    await redis.quit();
    return url;
  }

  it("copies every record into an empty store, the format stamp last, and leaves the rest", async () => {
    const from = await redisStore();
    const to = postgresTestUrl();
    expect(await copyStore(from, to)).toEqual({ keys: 2, format: FORMAT_VERSION });
    const target = createStorageFromUrl(to);
    expect((await target.getKeys()).sort()).toEqual(
      [FORMAT_KEY, "journals:ses_1:00000000", "projects:prj_1"].sort(),
    );
    expect(await target.getItem("journals:ses_1:00000000")).toEqual({ seq: 0, kind: "sleep" });
    await target.dispose();
    // Not empty now: a second copy into it is refused.
    await expect(copyStore(from, to)).rejects.toThrow(/is not empty; copy into a new table/);
  });

  it("copies the parts of values kept apart, a few to a commit, as their sealed text", async () => {
    const from = await redisStore();
    const source = createStores(createStorageFromUrl(from));
    const parts = Array.from({ length: 20 }, (_, i) => `sealed:v1:part-${i}`);
    const apart = { field: "result" as const, parts: 20, bytes: 20 };
    await source.journals.append("ses_1", {
      seq: 1,
      kind: "activity",
      function: "m.f",
      apart,
      parts,
    });
    await source.dispose();
    const to = postgresTestUrl();
    expect(await copyStore(from, to)).toEqual({ keys: 23, format: FORMAT_VERSION });
    const target = createStores(createStorageFromUrl(to));
    expect(await target.journals.parts("ses_1", 1, 20)).toEqual(parts);
    expect((await target.journals.list("ses_1")).map((s) => s.seq)).toEqual([0, 1]);
    await target.dispose();
  });

  it("refuses a Redis source an instance is running on, and writes nothing", async () => {
    const from = await redisStore();
    const to = postgresTestUrl();
    const mark = await markRedisAlone(redisTarget(from)!);
    try {
      await expect(copyStore(from, to)).rejects.toThrow(
        /an instance is running on .*stop it first/,
      );
    } finally {
      await mark.dispose();
    }
    const target = createStorageFromUrl(to);
    expect(await target.getKeys()).toEqual([]);
    await target.dispose();
  });

  it("refuses the same store twice, a memory store and an empty source", async () => {
    const from = await redisStore();
    await expect(copyStore(from, from)).rejects.toThrow(/are the same store/);
    await expect(copyStore(from, "memory:")).rejects.toThrow(/a memory store keeps nothing/);
    await expect(copyStore(redisTestUrl(), postgresTestUrl())).rejects.toThrow(/holds nothing/);
  });
});
