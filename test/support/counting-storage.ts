import { createStorage, type Driver, type Storage } from "unstorage";
import type { BatchOp } from "../../src/storage/drivers/lmdb.ts";

/** Commits and keys written so far, per namespace (`sessions`, `logs`, …). */
export interface WriteCounts {
  /**
   * Storage commits: one per setItem/removeItem, one per atomic batch; not those of the
   * overview's counters alone (`counterCommits`).
   */
  commits: number;
  /**
   * Commits of the overview's per-minute counters (`stats:` keys) alone: written once a second
   * for every session that changed meanwhile, so a session's window may hold one or none.
   */
  counterCommits: number;
  /** Keys set or removed, in all. */
  keys: number;
  byNamespace: Record<string, number>;
}

/**
 * A memory storage that counts its writes, for tests that measure what a session costs. It has
 * a `batch` method, so `atomicBatch` commits through it in one step, as on lmdb.
 * @example const { storage, counts } = countingStorage(); … expect(counts.commits).toBe(4);
 */
export function countingStorage(): { storage: Storage; counts: WriteCounts; reset(): void } {
  const data = new Map<string, string>();
  const counts: WriteCounts = { commits: 0, counterCommits: 0, keys: 0, byNamespace: {} };
  const touch = (key: string) => {
    counts.keys++;
    const ns = key.split(":")[0]!;
    counts.byNamespace[ns] = (counts.byNamespace[ns] ?? 0) + 1;
  };
  const driver: Driver & { batch(ops: BatchOp[]): Promise<void> } = {
    name: "counting-memory",
    hasItem: (key) => data.has(key),
    getItem: (key) => data.get(key) ?? null,
    setItem(key, value) {
      if (key.startsWith("stats:")) counts.counterCommits++;
      else counts.commits++;
      touch(key);
      data.set(key, value);
    },
    removeItem(key) {
      if (key.startsWith("stats:")) counts.counterCommits++;
      else counts.commits++;
      touch(key);
      data.delete(key);
    },
    getKeys: (base) => [...data.keys()].filter((k) => !base || k.startsWith(base)),
    clear: () => data.clear(),
    async batch(ops) {
      if (ops.length > 0 && ops.every((op) => op.key.startsWith("stats:"))) counts.counterCommits++;
      else counts.commits++;
      for (const op of ops) {
        touch(op.key);
        op.value === null ? data.delete(op.key) : data.set(op.key, op.value);
      }
    },
  };
  return {
    storage: createStorage({ driver }),
    counts,
    reset() {
      counts.commits = 0;
      counts.counterCommits = 0;
      counts.keys = 0;
      counts.byNamespace = {};
    },
  };
}
