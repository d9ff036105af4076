import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { normalizeKey, prefixStorage, type Storage } from "unstorage";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../../test/support/postgres.ts";
import { redisTestUrl, warnIfNoRedis } from "../../../test/support/redis.ts";
import { createStorageFromUrl } from "../driver.ts";
import { atomicBatch, type BatchMode, normalKey } from "./batch.ts";

const drivers: { name: string; url: (dir: string) => string; mode: BatchMode; on: boolean }[] = [
  { name: "memory", url: () => "memory:", mode: "atomic", on: true },
  { name: "lmdb", url: (dir) => `lmdb:${join(dir, "db")}`, mode: "atomic", on: true },
  { name: "fs", url: (dir) => `fs:${dir}`, mode: "sequential", on: true },
  { name: "redis", url: redisTestUrl, mode: "atomic", on: warnIfNoRedis("atomicBatch over redis") },
  { name: "postgres", url: postgresTestUrl, mode: "atomic", on: warnIfNoPostgres("atomicBatch") },
];
afterAll(dropPostgresTestTables);

for (const driver of drivers) {
  describe.skipIf(!driver.on)(`atomicBatch over ${driver.name}`, () => {
    let dir = "";
    let storage: Storage;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), `hookline-batch-${driver.name}-`));
      storage = createStorageFromUrl(driver.url(dir));
    });
    afterEach(async () => {
      await storage.clear();
      await storage.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    it("sets and removes keys, reading back as setItem would have stored them", async () => {
      await storage.setItem("project-names:old", "prj_1");
      const doc = { project: { id: "prj_1", name: "new" }, vars: [] };
      const mode = await atomicBatch(storage, [
        { key: "projects:prj_1", value: doc },
        { key: "project-names:new", value: "prj_1" },
        { key: "project-names:old", value: null },
        { key: "counts:prj_1", value: 3 },
      ]);
      expect(mode).toBe(driver.mode);
      const projects = prefixStorage(storage, "projects");
      expect(await projects.getItem("prj_1")).toEqual(doc);
      expect(await storage.getItem("project-names:new")).toBe("prj_1");
      expect(await storage.hasItem("project-names:old")).toBe(false);
      expect(await storage.getItem("counts:prj_1")).toBe(3);
    });

    it("refuses a bad key before writing anything", async () => {
      await expect(
        atomicBatch(storage, [
          { key: "a:1", value: 1 },
          { key: ":", value: 2 },
        ]),
      ).rejects.toThrow(/invalid key/);
      expect(await storage.hasItem("a:1")).toBe(false);
    });
  });
}

describe("a key as atomicBatch takes it", () => {
  it("is unstorage's normal form, whether it came so or not", () => {
    const keys = [
      "sessions:ses_1",
      "session-index:prj_1:created:ses_1",
      "a",
      "",
      ":a",
      "a:",
      "::a::b::",
      "a/b\\c",
      "a?x=1",
      "a:b?c/d",
      "a::b",
      "?",
      ":",
      "a.b:c-d_e",
    ];
    for (const key of keys) expect(normalKey(key), key).toBe(normalizeKey(key));
    const same = "session-index:prj_1:created:ses_1";
    expect(normalKey(same)).toBe(same);
  });
});
