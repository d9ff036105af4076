import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { redisTestUrl, warnIfNoRedis } from "../../test/support/redis.ts";
import { createStorageFromUrl, redisTarget } from "./driver.ts";
import { FORMAT_KEY, FORMAT_VERSION, openFormat, readFormat } from "./format.ts";
import { createStores } from "./records.ts";

const dirs: string[] = [];
const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), "hookline-format-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropPostgresTestTables();
});

const engines: { name: string; url: () => string; enabled: boolean }[] = [
  { name: "memory", url: () => "memory:", enabled: true },
  { name: "fs", url: () => `fs:${tmp()}`, enabled: true },
  { name: "lmdb", url: () => `lmdb:${join(tmp(), "db")}`, enabled: true },
  { name: "redis", url: redisTestUrl, enabled: warnIfNoRedis("the redis format tests") },
  { name: "postgres", url: postgresTestUrl, enabled: warnIfNoPostgres("the postgres format") },
];

for (const engine of engines) {
  describe.skipIf(!engine.enabled)(`the store's format on ${engine.name}`, () => {
    it("stamps a new store with this release's version", async () => {
      const storage = createStorageFromUrl(engine.url());
      try {
        expect(await openFormat(storage)).toEqual({ from: FORMAT_VERSION, to: FORMAT_VERSION });
        expect(await readFormat(storage)).toBe(FORMAT_VERSION);
      } finally {
        await storage.clear();
        await storage.dispose();
      }
    });

    it("migrates a store of format 1 (data, no version) once, dropping the UI's own index", async () => {
      const storage = createStorageFromUrl(engine.url());
      try {
        await storage.setItem("projects:prj_old", { kept: true });
        await storage.setItem("ui-session-feed:all:head", { count: 1 });
        await storage.setItem("ui-session-feed:all:page:00000000", ["ses_1"]);
        expect(await readFormat(storage)).toBe(1);
        expect(await openFormat(storage)).toEqual({ from: 1, to: FORMAT_VERSION });
        expect(await storage.getItem("projects:prj_old")).toEqual({ kept: true });
        expect(await storage.getKeys("ui-session-feed")).toEqual([]); // folded into the index
        expect(await readFormat(storage)).toBe(FORMAT_VERSION);
        expect(await openFormat(storage)).toEqual({ from: FORMAT_VERSION, to: FORMAT_VERSION });
      } finally {
        await storage.clear();
        await storage.dispose();
      }
    });

    it("refuses a newer format, naming both versions, and writes nothing", async () => {
      const storage = createStorageFromUrl(engine.url());
      try {
        await storage.setItem(FORMAT_KEY, FORMAT_VERSION + 1);
        await storage.setItem("projects:prj_x", { kept: true });
        const before = (await storage.getKeys()).sort();
        await expect(openFormat(storage)).rejects.toThrow(
          `storage format ${FORMAT_VERSION + 1} is newer than this release reads (format ${FORMAT_VERSION})`,
        );
        expect((await storage.getKeys()).sort()).toEqual(before);
        expect(await readFormat(storage)).toBe(FORMAT_VERSION + 1);
      } finally {
        await storage.clear();
        await storage.dispose();
      }
    });
  });
}

describe("the format's file on an fs: data home", () => {
  it("is meta/format-version, holding the version", async () => {
    const dir = tmp();
    const storage = createStorageFromUrl(`fs:${dir}`);
    await openFormat(storage);
    await storage.dispose();
    expect(readFileSync(join(dir, "meta", "format-version"), "utf8")).toBe(String(FORMAT_VERSION));
  });
});

const redisOn = warnIfNoRedis("the redis journal migration test");

describe.skipIf(!redisOn)("format 1 to 2 on Redis", () => {
  it("moves every journal key and index entry of format 1 into their hashes, with the version, in one MULTI", async () => {
    const url = redisTestUrl();
    const base = redisTarget(url)!.base;
    const stores = createStores(createStorageFromUrl(url));
    const client = stores.storage.getMount("").driver.getInstance!() as Redis;
    try {
      // What the release before wrote: one string key per step.
      const steps = (n: number) => ({ seq: n, kind: "activity", function: `f${n}`, result: "r" });
      await client.mset(
        `${base}:journals:ses_a:00000000`,
        JSON.stringify(steps(0)),
        `${base}:journals:ses_a:00000001`,
        JSON.stringify(steps(1)),
        `${base}:journals:ses_b:00000000`,
        JSON.stringify(steps(0)),
        `${base}:sessions:ses_a`,
        JSON.stringify({ id: "ses_a" }),
        `${base}:session-index:prj_a:running:ses_a`,
        "1",
        `${base}:session-index:prj_a:completed:ses_b`,
        "1",
      );
      expect(await stores.journals.list("ses_a")).toEqual([]); // format 1 is not read as 2
      expect(await openFormat(stores.storage)).toEqual({ from: 1, to: FORMAT_VERSION });
      expect(await stores.journals.list("ses_a")).toEqual([steps(0), steps(1)]);
      expect(await stores.journals.list("ses_b")).toEqual([steps(0)]);
      expect(await stores.sessionIndex.entries("prj_a")).toEqual([
        { project_id: "prj_a", state: "completed", id: "ses_b" },
        { project_id: "prj_a", state: "running", id: "ses_a" },
      ]);
      expect(await client.hkeys(`${base}:session-index:prj_a`)).toHaveLength(2);
      expect(await client.keys(`${base}:journals:*`)).toEqual(
        expect.arrayContaining([`${base}:journals:ses_a`, `${base}:journals:ses_b`]),
      );
      expect((await client.keys(`${base}:journals:*`)).length).toBe(2);
      expect(await client.keys(`${base}:session-index:*`)).toEqual([`${base}:session-index:prj_a`]);
      expect(await client.type(`${base}:journals:ses_a`)).toBe("hash");
      expect(await client.get(`${base}:sessions:ses_a`)).toBe(JSON.stringify({ id: "ses_a" }));
      expect(await readFormat(stores.storage)).toBe(FORMAT_VERSION);
    } finally {
      await stores.storage.clear();
      await stores.dispose();
    }
  });
});
