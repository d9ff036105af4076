import { Redis } from "ioredis";
import { prefixStorage, type Storage } from "unstorage";

/** What the first delivery of a key answered, kept so repeats get the same answer. */
export interface DedupRecord {
  event_id: string;
  session_id: string | null;
  /** "accepted": answered 202. "sync": answered with the session's final outcome. */
  kind: "accepted" | "sync";
  /** False while the first delivery is still being stored (another instance may be at it). */
  done: boolean;
  /** A sync delivery's final outcome once it came (body base64), else null. */
  outcome: { status_code: number; headers: Record<string, string>; body: string | null } | null;
  /** Epoch ms after which the key is forgotten. */
  expires_at: number;
}

/** Where delivery keys live: the service's storage, or Redis so that instances share them. */
export interface DedupStore {
  /** Stores `record` under `key` unless the key is held; returns the holder's record, else null. */
  claim(key: string, record: DedupRecord): Promise<DedupRecord | null>;
  /** Replaces the record of a key this caller holds (its expiry stays). */
  update(key: string, record: DedupRecord): Promise<void>;
  get(key: string): Promise<DedupRecord | null>;
  /** Lets the key go (the first delivery failed before it was stored). */
  release(key: string): Promise<void>;
  dispose(): Promise<void>;
}

/** Keys remembered at most by the storage-backed store; past it the oldest go first. */
export const MAX_LOCAL_KEYS = 100_000;

/**
 * Keys in the service's own storage (memory or fs), for one instance. Atomicity comes from the
 * caller's in-process claim map; this keeps the records and forgets them when they expire or
 * when more than `maxKeys` are held (oldest first), so memory and disk stay bounded.
 * @example const store = storageDedupStore(createStorage());
 */
export function storageDedupStore(storage: Storage, maxKeys = MAX_LOCAL_KEYS): DedupStore {
  const ns = prefixStorage(storage, "dedup");
  // Insertion order is expiry order (one window for all keys): the head expires first.
  const expiries = new Map<string, number>();
  const forget = (key: string) => {
    expiries.delete(key);
    return ns.removeItem(key);
  };
  const sweep = async (now: number) => {
    for (const [key, at] of expiries) {
      if (at > now && expiries.size <= maxKeys) break;
      await forget(key);
    }
  };
  // Keys left by an earlier run (fs storage) join the index, so they expire too.
  const loaded = (async () => {
    const keys = await ns.getKeys();
    const found: [string, number][] = [];
    for (const key of keys) {
      const rec = await ns.getItem<DedupRecord>(key);
      if (rec) found.push([key, rec.expires_at]);
    }
    found.sort((a, b) => a[1] - b[1]);
    for (const [key, at] of found) if (!expiries.has(key)) expiries.set(key, at);
  })().catch(() => {});
  const get = async (key: string) => {
    const rec = await ns.getItem<DedupRecord>(key);
    return rec && rec.expires_at > Date.now() ? rec : null;
  };
  return {
    get,
    async claim(key, record) {
      await loaded;
      const held = await get(key);
      if (held) return held;
      expiries.delete(key);
      expiries.set(key, record.expires_at);
      await ns.setItem(key, record);
      await sweep(Date.now());
      return null;
    },
    update: (key, record) => ns.setItem(key, record),
    release: (key) => forget(key),
    async dispose() {
      await loaded;
    },
  };
}

/**
 * Keys in Redis under `<base>:dedup:`, claimed with `SET NX PX`: two instances on one Redis
 * dedupe each other, and Redis expires the keys.
 * @example const store = redisDedupStore("redis://127.0.0.1:6379", "hookline");
 */
export function redisDedupStore(url: string, base: string): DedupStore {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  redis.on("error", () => {}); // a call fails on its own; the client reconnects
  const name = (key: string) => `${base}:dedup:${key}`;
  const get = async (key: string) => {
    const text = await redis.get(name(key));
    return text ? (JSON.parse(text) as DedupRecord) : null;
  };
  let disposed = false;
  return {
    get,
    async claim(key, record) {
      const ttl = Math.max(1, record.expires_at - Date.now());
      for (let attempt = 0; attempt < 3; attempt++) {
        const ok = await redis.set(name(key), JSON.stringify(record), "PX", ttl, "NX");
        if (ok === "OK") return null;
        const held = await get(key);
        // Gone between the two calls (expired or released): try to take it again.
        if (held) return held;
      }
      throw new Error(`delivery key ${key}: could not claim or read it`);
    },
    async update(key, record) {
      const ttl = Math.max(1, record.expires_at - Date.now());
      await redis.set(name(key), JSON.stringify(record), "PX", ttl, "XX");
    },
    async release(key) {
      await redis.del(name(key));
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
