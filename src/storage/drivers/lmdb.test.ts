import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RootDatabase } from "lmdb";
import { createStorage, type Storage } from "unstorage";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectEngine } from "../driver.ts";
import { type BatchDriver, lmdbDriver, MAX_KEY_BYTES, prefixRange } from "./lmdb.ts";

let dir = "";
let driver: BatchDriver;
let storage: Storage;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hookline-lmdb-"));
  driver = lmdbDriver({ path: join(dir, "db") });
  storage = createStorage({ driver });
});
afterEach(async () => {
  await storage.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("lmdb driver", () => {
  it("keeps values as unstorage hands them over, and removes them", async () => {
    await storage.setItem("projects:p1", { name: "shop", n: 1 });
    await storage.setItem("names:shop", "p1");
    expect(await storage.getItem("projects:p1")).toEqual({ name: "shop", n: 1 });
    expect(await storage.getItem("names:shop")).toBe("p1");
    expect(await storage.hasItem("names:shop")).toBe(true);
    await storage.removeItem("names:shop");
    expect(await storage.hasItem("names:shop")).toBe(false);
    expect(await storage.getItem("names:shop")).toBeNull();
  });

  it("lists the keys under a base in byte order, and only those", async () => {
    const under = ["a:0", "a:1", "a:b:c", "a:z", "a:é"];
    const others = ["a", "ab:1", "a;", "b:1", "A:1", "9:a"];
    for (const key of [...others, ...under].sort(() => Math.random() - 0.5)) {
      await storage.setItem(key, key);
    }
    expect(await driver.getKeys("a:", {})).toEqual(under);
    expect(await driver.getKeys("a", {})).toEqual(under);
    expect(await storage.getKeys("a")).toEqual(under);
    expect(await storage.getKeys("a:b")).toEqual(["a:b:c"]);
    expect(await storage.getKeys("nothing")).toEqual([]);
    expect((await storage.getKeys()).length).toBe(under.length + others.length);
    expect(prefixRange("logs:")).toEqual({ start: "logs:", end: "logs;" });
  });

  it("clears one base, or everything", async () => {
    for (const key of ["a:1", "a:2", "ab:1", "b:1"]) await storage.setItem(key, 1);
    // On the driver: unstorage 1.17's `storage.clear(base)` never reaches a driver mounted at
    // the root (it only picks mounts under the base).
    await driver.clear!("a:", {});
    expect(await storage.getKeys()).toEqual(["ab:1", "b:1"]);
    await storage.clear();
    expect(await storage.getKeys()).toEqual([]);
  });

  it("commits a batch of sets and removes together", async () => {
    await storage.setItem("k:old", "x");
    await driver.batch([
      { key: "k:1", value: "one" },
      { key: "k:old", value: null },
      { key: "k:2", value: '{"n":2}' },
    ]);
    expect(await storage.getKeys("k")).toEqual(["k:1", "k:2"]);
    expect(await storage.getItem("k:2")).toEqual({ n: 2 });
  });

  it("commits nothing of a batch with a bad op", async () => {
    await storage.setItem("k:1", "before");
    const bad = [
      { key: "k:1", value: "after" },
      { key: "k:2", value: "two" },
      { key: "x".repeat(MAX_KEY_BYTES + 1), value: "too long a key" },
    ];
    await expect(driver.batch(bad)).rejects.toThrow(/longer than/);
    expect(await storage.getItem("k:1")).toBe("before");
    expect(await storage.hasItem("k:2")).toBe(false);
  });

  it("commits a batch as one transaction", async () => {
    // What all-or-nothing rests on: the ops are one block of one write transaction, whose
    // commit (or abort, on any op the engine refuses) takes them all.
    const db = driver.getInstance!() as RootDatabase<string, string>;
    const txnId = () => (db.getStats() as { lastTxnId: number }).lastTxnId;
    await storage.setItem("k:0", "zero");
    const before = txnId();
    await driver.batch([
      { key: "k:1", value: "one" },
      { key: "k:0", value: null },
      { key: "k:2", value: "two" },
    ]);
    expect(txnId()).toBe(before + 1);
    expect(await storage.getKeys("k")).toEqual(["k:1", "k:2"]);
  });

  it("reopens a store written under one sync setting under each other one", async () => {
    await storage.dispose();
    const path = join(dir, "db");
    const order = ["normal", "full", "meta", "normal"] as const;
    for (const [i, sync] of order.entries()) {
      const s = createStorage({ driver: lmdbDriver({ path, sync }) });
      for (let j = 0; j < i; j++) expect(await s.getItem(`k:${j}`)).toBe(order[j]);
      await s.setItem(`k:${i}`, sync);
      await s.dispose();
    }
    storage = createStorage({ driver: lmdbDriver({ path }) });
  });

  it("keeps its data across close and reopen", async () => {
    await storage.setItem("sessions:s1", { state: "running" });
    await driver.batch([{ key: "journals:s1:00000000", value: '{"seq":0}' }]);
    await storage.dispose();
    const again = createStorage({ driver: lmdbDriver({ path: join(dir, "db") }) });
    expect(await again.getItem("sessions:s1")).toEqual({ state: "running" });
    expect(await again.getKeys("journals:s1")).toEqual(["journals:s1:00000000"]);
    await again.dispose();
  });
});

describe("detectEngine", () => {
  it("tells an fs-lite store from an LMDB one", async () => {
    const home = join(dir, "home");
    expect(detectEngine(home)).toEqual({
      found: "none",
      fs: `fs:${join(home, "store")}`,
      lmdb: `lmdb:${join(home, "db")}`,
    });
    mkdirSync(join(home, "store"), { recursive: true });
    writeFileSync(join(home, "store", "stray"), "");
    expect(detectEngine(home).found).toBe("none");
    mkdirSync(join(home, "store", "projects"));
    expect(detectEngine(home).found).toBe("fs");
    const db = createStorage({ driver: lmdbDriver({ path: join(home, "db") }) });
    await db.setItem("projects:p1", 1);
    await db.dispose();
    expect(detectEngine(home).found).toBe("both");
    rmSync(join(home, "store"), { recursive: true });
    expect(detectEngine(home).found).toBe("lmdb");
  });
});
