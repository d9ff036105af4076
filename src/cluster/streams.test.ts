import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { REDIS_URL, redisTestPrefix, warnIfNoRedis } from "../../test/support/redis.ts";
import { StreamFanout } from "./streams.ts";

const enabled = warnIfNoRedis("the stream fan-out tests");
const until = async (ok: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.skipIf(!enabled)("StreamFanout (Redis)", () => {
  const prefix = redisTestPrefix();
  const open: StreamFanout[] = [];
  const fanout = (id: string) => {
    const f = new StreamFanout(REDIS_URL!, prefix, id);
    open.push(f);
    return f;
  };
  afterEach(async () => {
    for (const f of open.splice(0)) await f.dispose();
  });

  it("delivers to every instance once, dropping a resent id", async () => {
    const a = fanout("a");
    const b = fanout("b");
    const got: Record<string, unknown[]> = { a: [], b: [] };
    a.receive("ch1", (m) => got.a!.push(m));
    b.receive("ch1", (m) => got.b!.push(m));
    await new Promise((r) => setTimeout(r, 200)); // groups created
    await a.send("ch1", { id: "m1", n: 1 });
    await a.send("ch1", { id: "m1", n: 1 }); // a retry that reached Redis twice
    await b.send("ch1", { id: "m2", n: 2 });
    await until(() => got.a!.length === 2 && got.b!.length === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(got.a).toEqual([
      { id: "m1", n: 1 },
      { id: "m2", n: 2 },
    ]);
    expect(got.b).toEqual(got.a);
  });

  it("delivers what was sent while the reader's connection was cut", async () => {
    const a = fanout("cut");
    const sender = fanout("sender");
    const got: unknown[] = [];
    a.receive("ch2", (m) => got.push(m));
    await new Promise((r) => setTimeout(r, 200));
    // Cut the readers' connections (blocked in XREADGROUP) and send at once, before they are back.
    const admin = new Redis(REDIS_URL!);
    const clients = (await admin.client("LIST")) as string;
    const blocked = clients
      .split("\n")
      .filter((l) => l.includes("cmd=xreadgroup"))
      .map((l) => /addr=(\S+)/.exec(l)?.[1])
      .filter((x): x is string => !!x);
    for (const addr of blocked) await admin.client("KILL", addr).catch(() => {});
    await sender.send("ch2", { id: "while-down" });
    await until(() => got.length === 1);
    expect(got).toEqual([{ id: "while-down" }]);
    expect(await a.since("ch2", Date.now() - 60_000)).toEqual([{ id: "while-down" }]);
    await admin.quit();
  });
});
