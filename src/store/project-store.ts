import { prefixStorage, type Storage } from "unstorage";
import { keyedLock } from "../locks.ts";
import { redisTarget } from "../storage/driver.ts";
import { redisMutator } from "./redis-mutate.ts";
import {
  addNumeric,
  canonical,
  numeric,
  StoreError,
  sizeOf,
  stableJson,
  type Wire,
} from "./values.ts";

/** One project's store: every key's value, and which keys are published. */
export interface StoreDoc {
  values: Record<string, Wire>;
  published: string[];
}

export interface StoreLimits {
  /** Bytes of one value's JSON (64 KiB). */
  maxValueBytes: number;
  /** Bytes of all keys and values of a project (1 MiB). */
  maxProjectBytes: number;
  /** Characters of a key (256). */
  maxKeyLength: number;
}

export const DEFAULT_LIMITS: StoreLimits = {
  maxValueBytes: 64 * 1024,
  maxProjectBytes: 1024 * 1024,
  maxKeyLength: 256,
};

/** Applies a change to a project's document atomically; returns what `change` returned. */
export type Mutate = <T>(
  projectId: string,
  change: (doc: StoreDoc) => { doc: StoreDoc | null; result: T },
) => Promise<T>;

const empty = (): StoreDoc => ({ values: {}, published: [] });

/** One per process, shared by every store object: the memory and fs paths serialise here. */
const localLocks = keyedLock();

/**
 * The project key-value store behind `get_value`, `add_values`, … Each operation reads, changes
 * and writes the project's one document atomically: in-process per project on the memory and fs
 * drivers, with WATCH/MULTI on the storage's own Redis key on the redis driver (so any number of
 * instances may share it). Values are kept in their wire form (see values.ts); the limits are
 * checked after each change, and a change over them leaves the document as it was.
 * @example
 * const store = createProjectStore({ storage, storageUrl: "memory:" });
 * await store.add("prj_x", "hits", 1); // 1
 */
export function createProjectStore(opts: {
  storage: Storage;
  /** The SVC_STORAGE URL the storage was made from: `redis://…` selects the Redis path. */
  storageUrl: string;
  limits?: Partial<StoreLimits>;
}) {
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const docs = prefixStorage(opts.storage, "store");
  const target = redisTarget(opts.storageUrl);
  const redis = target ? redisMutator(target.url, `${target.base}:store:`) : null;
  const locks = localLocks;

  const localMutate: Mutate = (projectId, change) =>
    locks.run(projectId, async () => {
      const doc = (await docs.getItem<StoreDoc>(projectId)) ?? empty();
      const { doc: next, result } = change(doc);
      if (next) await docs.setItem(projectId, next);
      return result;
    });
  const mutate: Mutate = redis ? redis.mutate : localMutate;

  const checkKey = (key: string) => {
    if (typeof key !== "string" || key.length === 0 || key.length > limits.maxKeyLength) {
      throw new StoreError(
        "ValueError",
        `store: a key is a non-empty string of at most ${limits.maxKeyLength} characters`,
      );
    }
  };

  /** The document with `key` set to `value` (null: removed), checked against the limits. */
  const withValue = (doc: StoreDoc, key: string, value: Wire | null): StoreDoc => {
    const values = { ...doc.values };
    let published = doc.published;
    if (value === null) {
      delete values[key];
      published = published.filter((k) => k !== key);
    } else {
      const size = sizeOf(value);
      if (size > limits.maxValueBytes) {
        throw new StoreError(
          "AutoKittehError",
          `store: value of "${key}" is ${size} bytes, over the limit of ${limits.maxValueBytes} bytes per value`,
        );
      }
      values[key] = value;
    }
    const total = Object.entries(values).reduce(
      (n, [k, w]) => n + Buffer.byteLength(k) + sizeOf(w),
      0,
    );
    if (value !== null && total > limits.maxProjectBytes) {
      throw new StoreError(
        "AutoKittehError",
        `store: setting "${key}" would make the project's store ${total} bytes, over the limit of ${limits.maxProjectBytes} bytes per project`,
      );
    }
    return { values, published };
  };

  // Local reads queue behind writes too: the fs driver does not write a file in one step.
  const read = async (projectId: string) =>
    redis
      ? await redis.read(projectId)
      : await locks.run(
          projectId,
          async () => (await docs.getItem<StoreDoc>(projectId)) ?? empty(),
        );

  return {
    limits,
    async get(projectId: string, key: string): Promise<Wire> {
      checkKey(key);
      return (await read(projectId)).values[key] ?? null;
    },
    async set(projectId: string, key: string, value: unknown): Promise<void> {
      checkKey(key);
      const w = canonical(value);
      await mutate(projectId, (doc) => ({ doc: withValue(doc, key, w), result: undefined }));
    },
    async del(projectId: string, key: string): Promise<void> {
      checkKey(key);
      await mutate(projectId, (doc) => ({
        doc: key in doc.values ? withValue(doc, key, null) : null,
        result: undefined,
      }));
    },
    /** Adds a number to the one under `key` (absent: starts from it); the new value. */
    async add(projectId: string, key: string, value: unknown): Promise<Wire> {
      checkKey(key);
      const w = canonical(value);
      const add = numeric(w);
      if (!add) throw new StoreError("TypeError", "add_values: the value to add must be a number");
      return mutate(projectId, (doc) => {
        const current = doc.values[key];
        let next: Wire = w;
        if (current !== undefined) {
          const have = numeric(current);
          if (!have)
            throw new StoreError("TypeError", `add_values: "${key}" does not hold a number`);
          next = addNumeric(have, add);
        }
        return { doc: withValue(doc, key, next), result: next };
      });
    },
    /** Sets `key` to `next` when it holds `expected` (null: absent); true when it did. */
    async checkAndSet(projectId: string, key: string, expected: unknown, next: unknown) {
      checkKey(key);
      const want = canonical(expected);
      const w = canonical(next);
      return mutate(projectId, (doc) => {
        const current = doc.values[key] ?? null;
        if (stableJson(current) !== stableJson(want)) return { doc: null, result: false };
        return { doc: withValue(doc, key, w), result: true };
      });
    },
    async listKeys(projectId: string): Promise<string[]> {
      return Object.keys((await read(projectId)).values).sort();
    },
    async publish(projectId: string, key: string): Promise<void> {
      checkKey(key);
      await mutate(projectId, (doc) => {
        if (!(key in doc.values))
          throw new StoreError("ValueError", `store: no value under "${key}" to publish`);
        if (doc.published.includes(key)) return { doc: null, result: undefined };
        return { doc: { ...doc, published: [...doc.published, key].sort() }, result: undefined };
      });
    },
    async unpublish(projectId: string, key: string): Promise<void> {
      checkKey(key);
      await mutate(projectId, (doc) => ({
        doc: doc.published.includes(key)
          ? { ...doc, published: doc.published.filter((k) => k !== key) }
          : null,
        result: undefined,
      }));
    },
    /** A published value (for the public URL), or null when the key is absent or not published. */
    async published(projectId: string, key: string): Promise<Wire> {
      const doc = await read(projectId);
      return doc.published.includes(key) ? (doc.values[key] ?? null) : null;
    },
    /** Every published key of a project with its value, keys sorted. */
    async publishedValues(projectId: string): Promise<Record<string, Wire>> {
      const doc = await read(projectId);
      const out: Record<string, Wire> = {};
      for (const key of doc.published) if (key in doc.values) out[key] = doc.values[key] ?? null;
      return out;
    },
    /** Removes a project's whole store (when the project is deleted). */
    async clear(projectId: string): Promise<void> {
      if (redis) await redis.remove(projectId);
      else await locks.run(projectId, () => docs.removeItem(projectId));
    },
    async dispose(): Promise<void> {
      await redis?.dispose();
    },
  };
}

export type ProjectStore = ReturnType<typeof createProjectStore>;
