import { createStorage, type Storage } from "unstorage";
import memory from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { createSessionFeed, FEED_PAGE } from "./session-feed.ts";

/** A memory storage that counts reads, to show what one page of the list costs. */
function countingStorage() {
  const storage: Storage = createStorage({ driver: memory() });
  const counts = { getItem: 0, getKeys: 0 };
  const getItem = storage.getItem.bind(storage);
  const getKeys = storage.getKeys.bind(storage);
  storage.getItem = ((...args: Parameters<typeof getItem>) => {
    counts.getItem++;
    return getItem(...args);
  }) as typeof storage.getItem;
  storage.getKeys = ((...args: Parameters<typeof getKeys>) => {
    counts.getKeys++;
    return getKeys(...args);
  }) as typeof storage.getKeys;
  return { storage, counts };
}

const id = (n: number) => `ses_${String(n).padStart(26, "0")}`;

describe("session feed", () => {
  it("pages 100,000 sessions newest first by cursor, reading a page document or two and never listing keys", async () => {
    const { storage, counts } = countingStorage();
    const total = 100_000;
    const feed = createSessionFeed(storage);
    for (let n = 0; n < total; n++) {
      await feed.append({ id: id(n), project_id: n % 2 ? "prj_a" : "prj_b", trigger_name: "t" });
    }
    // A fresh reader (another process) starts from storage.
    const reader = createSessionFeed(storage);
    counts.getItem = 0;
    counts.getKeys = 0;
    const first = await reader.entries({ kind: "all" }, null, 50);
    expect(first.map((e) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => id(total - 1 - i)));
    expect(counts.getKeys).toBe(0);
    expect(counts.getItem).toBeLessThanOrEqual(3); // head (+ its tail page) + one page
    counts.getItem = 0;
    const deep = await reader.entries({ kind: "all" }, 10_030, 50);
    expect(deep[0]!.id).toBe(id(10_029));
    expect(deep.at(-1)!.id).toBe(id(9_980));
    expect(counts.getItem).toBeLessThanOrEqual(2);
    expect(counts.getKeys).toBe(0);

    const a = await reader.entries({ kind: "project", projectId: "prj_a" }, null, 3);
    expect(a.map((e) => e.id)).toEqual([id(99_999), id(99_997), id(99_995)]);
    const t = await reader.entries({ kind: "trigger", projectId: "prj_b", trigger: "t" }, null, 1);
    expect(t[0]!.id).toBe(id(99_998));
    const none = await reader.entries(
      { kind: "trigger", projectId: "prj_b", trigger: "x" },
      null,
      5,
    );
    expect(none).toEqual([]);
  });

  it("walks every entry once across pages, ending at the oldest", async () => {
    const { storage } = countingStorage();
    const feed = createSessionFeed(storage);
    const total = FEED_PAGE * 2 + 17;
    for (let n = 0; n < total; n++) {
      await feed.append({ id: id(n), project_id: "prj_a", trigger_name: "t" });
    }
    const seen: string[] = [];
    let before: number | null = null;
    for (;;) {
      const page = await feed.entries({ kind: "all" }, before, 64);
      if (page.length === 0) break;
      seen.push(...page.map((e) => e.id));
      before = page.at(-1)!.seq;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect(seen[0]).toBe(id(total - 1));
    expect(seen.at(-1)).toBe(id(0));
  });
});
