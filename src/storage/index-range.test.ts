import { describe, expect, it } from "vitest";
import type { KeyRange } from "./drivers/capabilities.ts";
import { newestOf } from "./index-range.ts";

/** A key walk over sorted keys, as the drivers do it, that counts the keys it hands out. */
function walker(keys: string[]) {
  const sorted = [...keys].sort();
  const read = { keys: 0, walks: 0 };
  const walk = async ({ start, end, reverse, limit }: KeyRange) => {
    let inRange = sorted.filter((k) => k >= start && k < end);
    if (reverse) inRange = inRange.reverse();
    const out = inRange.slice(0, limit ?? inRange.length);
    read.keys += out.length;
    read.walks++;
    return out;
  };
  return { walk, read };
}

const id = (n: number) => `ses_${String(n).padStart(8, "0")}`;
const range = (p: string, s: "completed" | "error") => {
  const base = `session-index:${p}:${s}:`;
  return { project_id: p, state: s, base, start: base, end: `session-index:${p}:${s};` };
};

describe("newestOf: the newest entries of many index ranges", () => {
  it("merges them newest first, reading a range further when the merge empties it", async () => {
    // Project a holds the 30 newest sessions; b and c the older ones, in two states.
    const keys: string[] = [];
    for (let n = 100; n < 130; n++) keys.push(`session-index:a:completed:${id(n)}`);
    for (let n = 0; n < 100; n++) {
      keys.push(`session-index:${n % 2 ? "b" : "c"}:${n % 3 ? "completed" : "error"}:${id(n)}`);
    }
    const { walk } = walker(keys);
    const ranges = ["a", "b", "c"].flatMap((p) => [range(p, "completed"), range(p, "error")]);
    const page = await newestOf(walk, ranges, 40);
    expect(page.map((e) => e.id)).toEqual(Array.from({ length: 40 }, (_, i) => id(129 - i)));
    expect(page[0]).toEqual({ project_id: "a", state: "completed", id: id(129) });
    expect(page.at(-1)?.project_id).not.toBe("a");
  });

  it("reads a few entries of each of many ranges, not a page's worth of each", async () => {
    const keys: string[] = [];
    for (let p = 0; p < 100; p++) {
      for (let n = 0; n < 100; n++) keys.push(`session-index:p${p}:completed:${id(n * 100 + p)}`);
    }
    const { walk, read } = walker(keys);
    const ranges = Array.from({ length: 100 }, (_, p) => range(`p${p}`, "completed"));
    const page = await newestOf(walk, ranges, 50);
    expect(page.map((e) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => id(9999 - i)));
    // Two a range at first (200), then a refill of the ranges the page took from: not 100 × 50.
    expect(read.keys).toBeLessThan(400);
  });
});
