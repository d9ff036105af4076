import { createStorage } from "unstorage";
import { describe, expect, it } from "vitest";
import { atomicBatch } from "./batch.ts";
import { memoryDriver } from "./memory.ts";

describe("memory driver", () => {
  it("lists the keys under a base in order, and only those, as keys come and go", async () => {
    const driver = memoryDriver();
    const storage = createStorage({ driver });
    const under = ["a:0", "a:1", "a:b:c", "a:z", "a:é"];
    const others = ["a", "ab:1", "a;", "b:1", "A:1", "9:a"];
    for (const key of [...others, ...under].sort(() => Math.random() - 0.5)) {
      await storage.setItem(key, key);
    }
    await storage.setItem("a:1", "again"); // an update adds no second entry
    expect(await driver.getKeys("a:", {})).toEqual(under);
    expect(await storage.getKeys("a")).toEqual(under);
    expect(await storage.getKeys("a:b")).toEqual(["a:b:c"]);
    expect(await storage.getKeys("nothing")).toEqual([]);
    expect((await storage.getKeys()).length).toBe(under.length + others.length);
    await storage.removeItem("a:1");
    await storage.removeItem("a:missing");
    expect(await storage.getKeys("a")).toEqual(["a:0", "a:b:c", "a:z", "a:é"]);
    expect(await storage.getItem("a:1")).toBeNull();
    await driver.clear!("a", {});
    expect(await storage.getKeys()).toEqual(["9:a", "A:1", "a", "a;", "ab:1", "b:1"]);
  });

  it("keeps values as unstorage hands them over, raw ones too", async () => {
    const storage = createStorage({ driver: memoryDriver() });
    await storage.setItem("projects:p1", { name: "shop", n: 1 });
    await storage.setItemRaw("blobs:1", new Uint8Array([1, 2]));
    expect(await storage.getItem("projects:p1")).toEqual({ name: "shop", n: 1 });
    expect(await storage.getItemRaw("blobs:1")).toEqual(new Uint8Array([1, 2]));
    expect(await storage.hasItem("projects:p1")).toBe(true);
  });

  it("commits a batch in one step", async () => {
    const storage = createStorage({ driver: memoryDriver() });
    await storage.setItem("names:old", "p1");
    const mode = await atomicBatch(storage, [
      { key: "names:new", value: "p1" },
      { key: "projects:p1", value: { name: "new" } },
      { key: "names:old", value: null },
    ]);
    expect(mode).toBe("atomic");
    expect(await storage.getKeys("names")).toEqual(["names:new"]);
    expect(await storage.getItem("projects:p1")).toEqual({ name: "new" });
  });
});
