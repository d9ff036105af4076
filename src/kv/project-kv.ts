import type { Storage } from "unstorage";
import { HooklineError } from "../errors.ts";
import { capabilitiesOf } from "../storage/drivers/capabilities.ts";
import { checkKey, DEFAULT_LIMITS, type DocAccess, type StoreLimits, withValue } from "./doc.ts";
import { localDocs } from "./local-docs.ts";
import { redisMutator } from "./redis-mutate.ts";
import { swapDocs } from "./swap-docs.ts";
import { addNumeric, canonical, numeric, stableJson, type Wire } from "./values.ts";

export { DEFAULT_LIMITS, type StoreDoc, type StoreLimits } from "./doc.ts";

/**
 * The project key-value store behind `get_value`, `add_values`, … Each operation reads, changes
 * and writes the project's one document atomically: in-process per project on the memory and fs
 * drivers (local-docs.ts), with a compare-and-set on the storage's own Redis key on the redis
 * driver (redis-mutate.ts, so any number of instances may share it): asked of the driver. Values are kept in their
 * wire form (see values.ts); the limits are checked after each change (doc.ts), and a change
 * over them leaves the document as it was.
 * @example
 * const store = createProjectKv({ storage });
 * await store.add("prj_x", "hits", 1); // 1
 */
export function createProjectKv(opts: { storage: Storage; limits?: Partial<StoreLimits> }) {
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  // A driver on Redis says so: its keys are changed there, atomically for every instance.
  // PostgreSQL swaps a key's value on the server: the same, for every instance of a fleet.
  const { redis, swap } = capabilitiesOf(opts.storage);
  const docs = redis
    ? redisMutator(redis.url, `${redis.base}:store:`)
    : swap
      ? swapDocs(opts.storage, swap)
      : localDocs(opts.storage);
  return {
    limits,
    ...valueOperations(docs, limits),
    ...publishing(docs, limits),
    /** Removes a project's whole store (when the project is deleted). */
    clear: (projectId: string) => docs.remove(projectId),
    dispose: () => docs.dispose(),
  };
}

export type ProjectKv = ReturnType<typeof createProjectKv>;

/** What handlers do with values: get, set, delete, add to a number, compare-and-set, list. */
function valueOperations(docs: DocAccess, limits: StoreLimits) {
  return {
    async get(projectId: string, key: string): Promise<Wire> {
      checkKey(limits, key);
      return (await docs.read(projectId)).values[key] ?? null;
    },
    async set(projectId: string, key: string, value: unknown): Promise<void> {
      checkKey(limits, key);
      const w = canonical(value);
      await docs.mutate(projectId, (doc) => ({
        doc: withValue(limits, doc, key, w),
        result: undefined,
      }));
    },
    async del(projectId: string, key: string): Promise<void> {
      checkKey(limits, key);
      await docs.mutate(projectId, (doc) => ({
        doc: key in doc.values ? withValue(limits, doc, key, null) : null,
        result: undefined,
      }));
    },
    /** Adds a number to the one under `key` (absent: starts from it); the new value. */
    async add(projectId: string, key: string, value: unknown): Promise<Wire> {
      checkKey(limits, key);
      const w = canonical(value);
      const add = numeric(w);
      if (!add)
        throw new HooklineError("wrong_type", "add_values: the value to add must be a number");
      return docs.mutate(projectId, (doc) => {
        const current = doc.values[key];
        let next: Wire = w;
        if (current !== undefined) {
          const have = numeric(current);
          if (!have)
            throw new HooklineError("wrong_type", `add_values: "${key}" does not hold a number`);
          next = addNumeric(have, add);
        }
        return { doc: withValue(limits, doc, key, next), result: next };
      });
    },
    /** Sets `key` to `next` when it holds `expected` (null: absent); true when it did. */
    async checkAndSet(projectId: string, key: string, expected: unknown, next: unknown) {
      checkKey(limits, key);
      const want = canonical(expected);
      const w = canonical(next);
      return docs.mutate(projectId, (doc) => {
        const current = doc.values[key] ?? null;
        if (stableJson(current) !== stableJson(want)) return { doc: null, result: false };
        return { doc: withValue(limits, doc, key, w), result: true };
      });
    },
    async listKeys(projectId: string): Promise<string[]> {
      return Object.keys((await docs.read(projectId)).values).sort();
    },
  };
}

/** Which values are public (served without a token at the URL `get_store_public_url` gives). */
function publishing(docs: DocAccess, limits: StoreLimits) {
  return {
    async publish(projectId: string, key: string): Promise<void> {
      checkKey(limits, key);
      await docs.mutate(projectId, (doc) => {
        if (!(key in doc.values))
          throw new HooklineError("bad_request", `store: no value under "${key}" to publish`);
        if (doc.published.includes(key)) return { doc: null, result: undefined };
        return { doc: { ...doc, published: [...doc.published, key].sort() }, result: undefined };
      });
    },
    async unpublish(projectId: string, key: string): Promise<void> {
      checkKey(limits, key);
      await docs.mutate(projectId, (doc) => ({
        doc: doc.published.includes(key)
          ? { ...doc, published: doc.published.filter((k) => k !== key) }
          : null,
        result: undefined,
      }));
    },
    /** A published value (for the public URL), or null when the key is absent or not published. */
    async published(projectId: string, key: string): Promise<Wire> {
      const doc = await docs.read(projectId);
      return doc.published.includes(key) ? (doc.values[key] ?? null) : null;
    },
    /** Every published key of a project with its value, keys sorted. */
    async publishedValues(projectId: string): Promise<Record<string, Wire>> {
      const doc = await docs.read(projectId);
      const out: Record<string, Wire> = {};
      for (const key of doc.published) if (key in doc.values) out[key] = doc.values[key] ?? null;
      return out;
    },
  };
}
