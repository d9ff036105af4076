import type { Redis } from "ioredis";
import { createStorage } from "unstorage";
import { afterAll, describe, expect, it } from "vitest";
import { redisTestUrl, warnIfNoRedis } from "../../../test/support/redis.ts";
import { redisTarget } from "../driver.ts";
import { redisDriver } from "./redis.ts";

const enabled = warnIfNoRedis("the redis driver's listing test");

describe.skipIf(!enabled)("redis driver", () => {
  const target = enabled ? redisTarget(redisTestUrl())! : { url: "", base: "" };
  const driver = redisDriver(target);
  const storage = createStorage({ driver });
  const client = () => driver.getInstance!() as Redis;
  afterAll(async () => {
    await driver.clear!("", {});
    await storage.dispose();
  });

  /** Moves `idx:a:moving` to `idx:b:moving` and back in MULTIs until `stop` says so. */
  async function keepMoving(stop: () => boolean) {
    const key = (s: string) => `${target.base}:idx:${s}:moving`;
    for (let i = 0; !stop(); i++) {
      const [from, to] = i % 2 ? ["b", "a"] : ["a", "b"];
      await client().multi().unlink(key(from)).set(key(to), "1").exec();
    }
  }

  it("lists a key that is moved in a MULTI meanwhile exactly once, as a snapshot would", async () => {
    const pipe = client().pipeline();
    for (let i = 0; i < 3000; i++) pipe.set(`${target.base}:idx:c:${i}`, "1");
    pipe.set(`${target.base}:idx:a:moving`, "1");
    await pipe.exec();
    let done = false;
    const mover = keepMoving(() => done);
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) {
      const keys = await storage.getKeys("idx");
      seen.push(keys.filter((k) => k.endsWith(":moving")).length);
      expect(keys.filter((k) => k.startsWith("idx:c:")).length).toBe(3000);
    }
    done = true;
    await mover;
    expect(seen).toEqual(Array(20).fill(1));
  });

  it("lists and clears only under its base, the names relative to it", async () => {
    await storage.setItem("a:1", "x");
    await storage.setItem("a:b:2", "y");
    await storage.setItem("ab:3", "z");
    expect((await storage.getKeys("a")).sort()).toEqual(["a:1", "a:b:2"]);
    await driver.clear!("a", {});
    expect(await storage.getKeys("a")).toEqual([]);
    expect(await storage.getKeys("ab")).toEqual(["ab:3"]);
  });
});
