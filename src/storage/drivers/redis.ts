import type { Redis } from "ioredis";
import redis from "unstorage/drivers/redis";
import type { CapableDriver } from "./capabilities.ts";
import type { BatchDriver, BatchOp } from "./lmdb.ts";

/** @example redisDriver({ url: "redis://127.0.0.1:6379", base: "hookline" }) */
export interface RedisDriverOptions {
  url: string;
  /** The prefix of every key, without its colon (`hookline` stores `hookline:sessions:…`). */
  base: string;
}

/**
 * Namespaces kept as one Redis hash per entity: the key `journals:<session>:<seq>` is the field
 * `<seq>` of the hash `journals:<session>`, so a session's journal is read with one `HKEYS` and
 * one `HMGET` whatever else the database holds (a `KEYS` match walks every key of it); and
 * `session-index:<project>:<state>:<session>` is the field `<state>:<session>` of
 * `session-index:<project>`, so a project's sessions are one `HKEYS`, which sees a state move
 * (one MULTI within that hash) whole or not at all.
 */
export const HASHED = ["journals", "session-index"];

/**
 * Where a key lives when its namespace is hashed: the hash (relative to the base) and the field.
 * @example hashPlace("journals:ses_1:00000003") // { hash: "journals:ses_1", field: "00000003" }
 */
export function hashPlace(key: string): { hash: string; field: string } | null {
  const parts = key.split(":");
  if (parts.length < 3 || !HASHED.includes(parts[0]!)) return null;
  return { hash: `${parts[0]}:${parts[1]}`, field: parts.slice(2).join(":") };
}

/** A key that names a whole hash (`journals:<session>`): listed by its fields. */
const isHash = (key: string) => {
  const parts = key.split(":");
  return parts.length === 2 && HASHED.includes(parts[0]!);
};

/**
 * unstorage's redis driver with two changes. Listing a base is one `KEYS` where unstorage loops
 * over `SCAN`; and the `HASHED` namespaces are hashes, one per entity (`hashPlace`).
 *
 * A `SCAN` walk is not a snapshot: a key renamed while it runs (a session's index entry moving
 * to its new state, in one MULTI) can be returned under neither name, so a listing could miss
 * a session that existed all along. One `KEYS` runs between two commands, so it sees every
 * MULTI whole or not at all; and it is one round trip where `SCAN` took one per ten keys
 * (measured here over 142,000 keys: 31 ms against 968 ms and 13,473 round trips). The price:
 * Redis serves nothing else while it matches every key of the database (docs/storage.md), which
 * is why what is read per session (its journal) is a hash instead.
 *
 * `batch` commits sets and removes in one MULTI (see `atomicBatch`).
 *
 * @example const storage = createStorage({ driver: redisDriver({ url, base: "hookline" }) });
 */
export function redisDriver(options: RedisDriverOptions): BatchDriver & CapableDriver {
  const driver = redis(options);
  const ks = keyspace(options.base, () => driver.getInstance!() as Redis);
  const { client, full } = ks;
  return {
    ...driver,
    async hasItem(key) {
      const at = hashPlace(key);
      if (at) return (await client().hexists(full(at.hash), at.field)) === 1;
      return (await client().exists(full(key))) === 1;
    },
    async getItem(key) {
      const at = hashPlace(key);
      return at ? client().hget(full(at.hash), at.field) : client().get(full(key));
    },
    getItems: (items) => readMany(ks, items),
    async setItem(key, value) {
      const at = hashPlace(key);
      if (at) await client().hset(full(at.hash), at.field, value);
      else await client().set(full(key), value);
    },
    async removeItem(key) {
      const at = hashPlace(key);
      if (at) await client().hdel(full(at.hash), at.field);
      else await client().unlink(full(key));
    },
    getKeys: (base) => keysUnder(ks, base),
    clear: (base) => clearUnder(ks, base),
    batch: (ops) => writeAll(ks, ops),
    capabilities: { redis: { url: options.url, base: options.base }, hashed: HASHED },
  };
}

/** The driver's keys in Redis: `<prefix>:<key>`, each a plain key or a field of a hash. */
interface Keyspace {
  client(): Redis;
  /** The Redis key of a driver key. */
  full(key: string): string;
  /** The driver key of a Redis key. */
  strip(key: string): string;
  /** The `KEYS` pattern of everything under `base`, glob characters escaped. */
  pattern(base?: string): string;
}

function keyspace(baseOption: string, client: () => Redis): Keyspace {
  const prefix = baseOption.replace(/:+$/, "");
  return {
    client,
    full: (key) => (prefix ? `${prefix}:${key}` : key),
    strip: (key) => (prefix ? key.slice(prefix.length + 1) : key),
    pattern(base) {
      const whole = [prefix, trim(base)].filter(Boolean).join(":");
      return whole ? `${whole.replace(/[*?[\]\\]/g, "\\$&")}:*` : "*";
    },
  };
}

const trim = (base?: string) => (base ?? "").replace(/:+$/, "");
/** The hash a base lies in (`journals:<session>` or below it), else null. */
const hashOf = (base: string) => (base.split(":").length >= 2 ? hashPlace(`${base}:x`) : null);

/** Every key under `base`, the hashes' fields as keys of their own. */
async function keysUnder(ks: Keyspace, base?: string): Promise<string[]> {
  const { client, full } = ks;
  const trimmed = trim(base);
  const inHash = hashOf(trimmed);
  if (inHash) {
    const fields = await client().hkeys(full(inHash.hash));
    const keys = fields.map((f) => `${inHash.hash}:${f}`);
    return keys.filter((k) => k.startsWith(`${trimmed}:`));
  }
  const found = (await client().keys(ks.pattern(base))).map(ks.strip);
  const hashes = found.filter(isHash);
  if (hashes.length === 0) return found;
  const pipe = client().pipeline();
  for (const h of hashes) pipe.hkeys(full(h));
  const replies = (await pipe.exec()) ?? [];
  const out = found.filter((k) => !isHash(k));
  hashes.forEach((h, i) => {
    const fields = (replies[i]?.[1] as string[] | undefined) ?? [];
    for (const f of fields) out.push(`${h}:${f}`);
  });
  return out;
}

/** Several values in one command per hash (HMGET) and one for the plain keys (MGET). */
async function readMany(ks: Keyspace, items: { key: string }[]) {
  const { client, full } = ks;
  const byHash = new Map<string, { index: number; field: string }[]>();
  const plain: { index: number; key: string }[] = [];
  items.forEach(({ key }, index) => {
    const at = hashPlace(key);
    if (!at) plain.push({ index, key });
    else byHash.set(at.hash, [...(byHash.get(at.hash) ?? []), { index, field: at.field }]);
  });
  const values: (string | null)[] = items.map(() => null);
  const put = (indexes: number[], got: (string | null)[]) => {
    indexes.forEach((index, i) => {
      values[index] = got[i] ?? null;
    });
  };
  const reads: Promise<void>[] = [];
  for (const [hash, wanted] of byHash) {
    const read = client().hmget(full(hash), ...wanted.map((w) => w.field));
    reads.push(
      read.then((got) =>
        put(
          wanted.map((w) => w.index),
          got,
        ),
      ),
    );
  }
  if (plain.length > 0) {
    const read = client().mget(...plain.map((p) => full(p.key)));
    reads.push(
      read.then((got) =>
        put(
          plain.map((p) => p.index),
          got,
        ),
      ),
    );
  }
  await Promise.all(reads);
  return items.map(({ key }, i) => ({ key, value: values[i] ?? null }));
}

/** Removes everything under `base`: a whole hash, fields of one, or plain keys by the thousand. */
async function clearUnder(ks: Keyspace, base?: string): Promise<void> {
  const { client, full } = ks;
  const trimmed = trim(base);
  if (isHash(trimmed)) {
    await client().unlink(full(trimmed));
    return;
  }
  const inHash = hashOf(trimmed);
  if (inHash) {
    const fields = (await keysUnder(ks, trimmed)).map((k) => hashPlace(k)!.field);
    if (fields.length > 0) await client().hdel(full(inHash.hash), ...fields);
    return;
  }
  const keys = await client().keys(ks.pattern(base));
  for (let i = 0; i < keys.length; i += 1000) await client().unlink(...keys.slice(i, i + 1000));
}

/** Every op or none: one MULTI. */
async function writeAll(ks: Keyspace, ops: BatchOp[]): Promise<void> {
  if (ops.length === 0) return;
  const { full } = ks;
  const multi = ks.client().multi();
  for (const op of ops) {
    const at = hashPlace(op.key);
    if (at) {
      if (op.value === null) multi.hdel(full(at.hash), at.field);
      else multi.hset(full(at.hash), at.field, op.value);
    } else if (op.value === null) multi.unlink(full(op.key));
    else multi.set(full(op.key), op.value);
  }
  const replies = await multi.exec();
  const failed = replies?.find(([err]) => err);
  if (!replies || failed) throw failed?.[0] ?? new Error("redis driver: MULTI was aborted");
}
