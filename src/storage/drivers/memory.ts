import type { CapableDriver } from "./capabilities.ts";
import type { BatchDriver } from "./lmdb.ts";
import { prefixRange } from "./lmdb.ts";

/**
 * An unstorage driver that keeps everything in this process (`SVC_STORAGE=memory:`: tests, the
 * bench, a throwaway emulator). Unstorage's own memory driver lists a base by handing back every
 * key it holds, which unstorage then normalizes and filters one by one: with thousands of
 * sessions each journal read cost a pass over all of them. Here the keys are also kept sorted,
 * so a base is one range, as on LMDB; and `batch` commits all-or-nothing in one synchronous step.
 *
 * @example
 * const storage = createStorage({ driver: memoryDriver() });
 * await storage.setItem("journals:ses_1:000001", "{}");
 * await storage.getKeys("journals:ses_1"); // ["journals:ses_1:000001"]
 */
export function memoryDriver(): BatchDriver & CapableDriver {
  const data = new Map<string, unknown>();
  /** Every key of `data`, in code-unit order (as `<` compares strings). */
  const sorted: string[] = [];

  /** The index of the first key not below `key`. */
  const lowerBound = (key: string): number => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const set = (key: string, value: unknown) => {
    if (!data.has(key)) sorted.splice(lowerBound(key), 0, key);
    data.set(key, value);
  };
  const remove = (key: string) => {
    if (data.delete(key)) sorted.splice(lowerBound(key), 1);
  };
  const keysIn = (base?: string): string[] => {
    const { start, end } = prefixRange(base);
    if (start === undefined || end === undefined) return [...sorted];
    const out: string[] = [];
    for (let i = lowerBound(start); i < sorted.length && (sorted[i] as string) < end; i++) {
      out.push(sorted[i] as string);
    }
    return out;
  };

  return {
    name: "memory",
    capabilities: {
      keyRange({ start, end, reverse, limit }) {
        const lo = lowerBound(start);
        const hi = Math.max(lo, lowerBound(end));
        const n = Math.min(hi - lo, limit ?? hi - lo);
        return Promise.resolve(
          reverse ? sorted.slice(hi - n, hi).reverse() : sorted.slice(lo, lo + n),
        );
      },
    },
    getInstance: () => data,
    hasItem: (key) => data.has(key),
    getItem: (key) => data.get(key) ?? null,
    getItemRaw: (key) => data.get(key) ?? null,
    setItem: set,
    setItemRaw: set,
    removeItem: remove,
    getKeys: (base) => keysIn(base),
    clear(base) {
      for (const key of keysIn(base)) remove(key);
    },
    dispose() {
      data.clear();
      sorted.length = 0;
    },
    batch(ops) {
      for (const op of ops) op.value === null ? remove(op.key) : set(op.key, op.value);
      return Promise.resolve();
    },
  };
}
