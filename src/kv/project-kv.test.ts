import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { createStorage } from "unstorage";
import { afterAll, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { redisTestUrl, warnIfNoRedis } from "../../test/support/redis.ts";
import { HooklineError } from "../errors.ts";
import { newId } from "../ids.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { capabilitiesOf } from "../storage/drivers/capabilities.ts";
import { memoryDriver } from "../storage/drivers/memory.ts";
import { createProjectKv, type ProjectKv } from "./project-kv.ts";

const dir = mkdtempSync(join(tmpdir(), "hookline-kv-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const drivers: { name: string; url: () => string; enabled: boolean }[] = [
  { name: "memory", url: () => "memory:", enabled: true },
  { name: "fs", url: () => `fs:${dir}`, enabled: true },
  { name: "redis", url: redisTestUrl, enabled: warnIfNoRedis("the project store over redis") },
  {
    name: "postgres",
    url: postgresTestUrl,
    enabled: warnIfNoPostgres("the project store over postgres"),
  },
];
afterAll(dropPostgresTestTables);

const limits = { maxValueBytes: 100, maxProjectBytes: 400, maxKeyLength: 16 };

async function rejection(p: Promise<unknown>): Promise<HooklineError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HooklineError);
  return e as HooklineError;
}

// One contract, every driver: atomic, exact and bounded whatever holds the bytes.
for (const driver of drivers) {
  describe.skipIf(!driver.enabled)(`project store over ${driver.name}`, () => {
    const url = driver.enabled ? driver.url() : "memory:";
    const storage = createStorageFromUrl(url);
    const open = () => createProjectKv({ storage, limits });
    const store: ProjectKv = open();
    afterAll(async () => {
      await storage.clear();
      await store.dispose();
      await storage.dispose();
    });

    it("gets, sets, deletes and lists keys per project", async () => {
      const [a, b] = [newId("prj"), newId("prj")];
      expect(await store.get(a, "k")).toBeNull();
      await store.set(a, "k", { x: [1, "two", null, true] });
      await store.set(a, "j", 0.5);
      await store.set(b, "k", "other project");
      expect(await store.get(a, "k")).toEqual({ x: [1, "two", null, true] });
      expect(await store.listKeys(a)).toEqual(["j", "k"]);
      await store.set(a, "j", null); // None deletes, as in AutoKitteh
      await store.del(a, "nothing");
      expect(await store.listKeys(a)).toEqual(["k"]);
      expect(await store.get(b, "k")).toBe("other project");
      await store.clear(a);
      expect(await store.listKeys(a)).toEqual([]);
    });

    it("adds numbers exactly: big ints stay ints, a float makes a float", async () => {
      const p = newId("prj");
      expect(await store.add(p, "n", 1)).toBe(1);
      expect(await store.add(p, "n", 2 ** 53 - 1)).toEqual({ $int: (2n ** 53n).toString() });
      expect(await store.add(p, "n", { $int: (2n ** 70n).toString() })).toEqual({
        $int: (2n ** 70n + 2n ** 53n).toString(),
      });
      expect(await store.add(p, "n", { $int: (-(2n ** 70n) - 2n ** 53n).toString() })).toBe(0);
      expect(await store.add(p, "f", 0.5)).toBe(0.5);
      expect(await store.add(p, "f", 0.5)).toEqual({ $float: "1" }); // 1.0, not the int 1
      expect(await store.add(p, "f", 1)).toEqual({ $float: "2" });
      expect(await store.add(p, "g", { $float: "1.0" })).toEqual({ $float: "1" });
      await store.set(p, "s", "text");
      expect((await rejection(store.add(p, "s", 1))).code).toBe("wrong_type");
      expect((await rejection(store.add(p, "n", true))).code).toBe("wrong_type");
      expect(await store.get(p, "s")).toBe("text");
    });

    it("serialises concurrent adds on one project (no lost update)", async () => {
      const p = newId("prj");
      const other = open(); // a second store object: on redis its own connection, like another instance
      try {
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? store : other).add(p, "hits", 1)),
        );
      } finally {
        await other.dispose();
      }
      expect(await store.get(p, "hits")).toBe(40);
    });

    it("checks and sets atomically, comparing values as Python does", async () => {
      const p = newId("prj");
      expect(await store.checkAndSet(p, "c", null, { a: 1, b: [1.5] })).toBe(true);
      expect(await store.checkAndSet(p, "c", null, "again")).toBe(false);
      expect(await store.checkAndSet(p, "c", { b: [1.5], a: 1 }, { $float: "2.0" })).toBe(true);
      expect(await store.get(p, "c")).toEqual({ $float: "2" });
      const wins = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.checkAndSet(p, "lock", null, i)),
      );
      expect(wins.filter(Boolean)).toHaveLength(1);
    });

    it("enforces the limits, names them, and changes nothing", async () => {
      const p = newId("prj");
      await store.set(p, "a", "x".repeat(90));
      const big = await rejection(store.set(p, "b", "x".repeat(200)));
      expect(big.code).toBe("too_large");
      expect(big.message).toContain("over the limit of 100 bytes per value");
      for (const k of ["b", "c", "d"]) await store.set(p, k, "x".repeat(90));
      const full = await rejection(store.set(p, "e", "x".repeat(90)));
      expect(full.message).toContain("over the limit of 400 bytes per project");
      expect(await store.listKeys(p)).toEqual(["a", "b", "c", "d"]);
      await store.set(p, "a", "small"); // replacing a value frees its room
      await store.set(p, "e", "x".repeat(20));
      const key = await rejection(store.set(p, "k".repeat(17), 1));
      expect(key.code).toBe("bad_request");
      expect(key.message).toContain("at most 16 characters");
      expect((await rejection(store.set(p, "t", { $int: "12x" }))).code).toBe("bad_request");
    });

    it("publishes values; deleting a key unpublishes it", async () => {
      const p = newId("prj");
      await store.set(p, "pub", { shown: true });
      expect(await store.published(p, "pub")).toBeNull();
      await store.publish(p, "pub");
      await store.publish(p, "pub");
      expect(await store.published(p, "pub")).toEqual({ shown: true });
      await store.set(p, "other", 2);
      expect(await store.publishedValues(p)).toEqual({ pub: { shown: true } });
      await store.unpublish(p, "pub");
      expect(await store.published(p, "pub")).toBeNull();
      expect(await store.publishedValues(p)).toEqual({});
      await store.publish(p, "pub");
      await store.del(p, "pub");
      await store.set(p, "pub", 1);
      expect(await store.published(p, "pub")).toBeNull();
      expect((await rejection(store.publish(p, "absent"))).message).toContain(
        'no value under "absent"',
      );
    });

    it("keeps the document where unstorage reads it", async () => {
      const p = newId("prj");
      await store.set(p, "k", { $int: (2n ** 64n).toString() });
      expect(await storage.getItem(`store:${p}`)).toEqual({
        values: { k: { $int: "18446744073709551616" } },
        published: [],
      });
    });
  });
}

describe.skipIf(!drivers[2]!.enabled)("project store on the Redis its driver names", () => {
  it("changes documents there, not through the storage's own calls: every instance sees them", async () => {
    const url = redisTestUrl();
    const shared = createStorageFromUrl(url);
    // A memory storage whose driver says its keys live on that Redis: the store must go there.
    const claimed = { ...memoryDriver(), capabilities: capabilitiesOf(shared) };
    const local = createStorage({ driver: claimed });
    const [kv, other] = [createProjectKv({ storage: local }), createProjectKv({ storage: shared })];
    try {
      const p = newId("prj");
      await kv.add(p, "n", 2);
      expect(await local.getItem(`store:${p}`)).toBeNull();
      expect(await other.add(p, "n", 3)).toBe(5);
      expect(await kv.get(p, "n")).toBe(5);
      await kv.clear(p);
    } finally {
      await kv.dispose();
      await other.dispose();
      await shared.dispose();
    }
  });
});

describe.skipIf(!drivers[3]!.enabled)("project store on one PostgreSQL, two processes", () => {
  it("counts every add of both: each swaps the document on the server", async () => {
    const url = postgresTestUrl();
    const storage = createStorageFromUrl(url);
    const here = createProjectKv({ storage });
    const p = newId("prj");
    const start = Date.now() + 4000; // the other process is up by then
    const adds = async (kv: ProjectKv) => {
      await new Promise((r) => setTimeout(r, start - Date.now()));
      for (let i = 0; i < 20; i++) await Promise.all([1, 2, 3].map(() => kv.add(p, "hits", 1)));
    };
    // The other instance: another process, its own connections and its own locks, adding
    // from the same moment, so that the read-change-writes of both overlap.
    const driver = JSON.stringify(new URL("../storage/driver.ts", import.meta.url).href);
    const kvModule = JSON.stringify(new URL("./project-kv.ts", import.meta.url).href);
    const other = [
      `const { createStorageFromUrl } = await import(${driver});`,
      `const { createProjectKv } = await import(${kvModule});`,
      `const storage = createStorageFromUrl(${JSON.stringify(url)});`,
      "const kv = createProjectKv({ storage });",
      `await (${adds
        .toString()
        .replaceAll("start", String(start))
        .replaceAll("p,", `${JSON.stringify(p)},`)})(kv);`,
      "await kv.dispose(); await storage.dispose();",
    ].join("\n");
    try {
      expect(capabilitiesOf(storage).swap).toBeTypeOf("function");
      const child = execa("node", ["--import", "tsx", "--input-type=module", "-e", other]);
      await adds(here);
      await child;
      expect(await here.get(p, "hits")).toBe(120);
    } finally {
      await here.dispose();
      await storage.dispose();
    }
  }, 60_000);
});
