import type { Storage } from "unstorage";
import { storeInUse } from "../cluster/redis-alone.ts";
import { parseStorageUrl } from "../storage-url.ts";
import { createStorageFromUrl, redisTarget } from "./driver.ts";
import { atomicBatch } from "./drivers/batch.ts";
import { FORMAT_KEY, openFormat, stampOp } from "./format.ts";
import { isPartKey } from "./session-records.ts";

/** Keys written to the target per commit. */
const BATCH = 500;
/** Parts of values kept apart (up to 1.8 MB each as stored) go a few to a commit. */
const PART_BATCH = 8;

/**
 * What a Redis store's keyspace holds beside the data: the coordination of the Redis fleet of
 * earlier releases (leases, the live set, the epoch, the work queue and its marks, once-claims),
 * the bus's streams, the start lock of one instance, and webhook deliveries seen in the last
 * minutes (`dedup`, kept by Redis with a time to live). None of it is copied.
 */
const NOT_DATA = new Set(["lease", "live", "epoch", "accepting", "stream", "bus", "once", "dedup"]);
const isData = (key: string) => !NOT_DATA.has(key.split(":")[0]!) && key !== "alone-lock";

/**
 * Copies every record of the store at `from` into the empty store at `to` (any two engines; the
 * move of a Redis store to PostgreSQL is the one docs/scale-out.md describes). The source is
 * brought to this release's format first, as a start of the service would; the format stamp
 * is written last, so a copy cut short leaves a target the next copy refuses as not empty and a
 * service will not take for a finished one. Refuses, changing nothing: the same store twice, a
 * memory store, an empty source, a target that holds anything, a Redis source an instance is
 * running on. Sealed values are copied as they are: the service on `to` needs the same secret
 * key (`SVC_SECRET_KEY`, else the config home's `secret.key`).
 * @example await copyStore("redis://127.0.0.1:6379", "postgres://db/hookline") // { keys: 1234, format: 2 }
 */
export async function copyStore(
  from: string,
  to: string,
): Promise<{ keys: number; format: number }> {
  for (const url of [from, to]) {
    if (parseStorageUrl(url).kind === "memory")
      throw new Error("storage copy: a memory store keeps nothing");
  }
  if (from === to) throw new Error("storage copy: --from and --to are the same store");
  await refuseIfRunning(from);
  const source = createStorageFromUrl(from);
  const target = createStorageFromUrl(to);
  try {
    if ((await source.getKeys()).length === 0)
      throw new Error(`storage copy: ${safe(from)} holds nothing`);
    if ((await target.getKeys()).length > 0)
      throw new Error(`storage copy: ${safe(to)} is not empty; copy into a new table or database`);
    const { to: format } = await openFormat(source);
    const keys = (await source.getKeys()).filter((k) => k !== FORMAT_KEY && isData(k)).sort();
    let copied = 0;
    for (const batch of batches(keys)) copied += await copyBatch(source, target, batch);
    await atomicBatch(target, [stampOp(format)]);
    return { keys: copied, format };
  } finally {
    await source.dispose();
    await target.dispose();
  }
}

/**
 * The keys in commits of at most BATCH, and of at most PART_BATCH parts of values kept apart,
 * so a commit holds megabytes, not the gigabyte 500 parts would.
 */
function batches(keys: string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let parts = 0;
  for (const key of keys) {
    if (current.length >= BATCH || (isPartKey(key) && parts >= PART_BATCH)) {
      out.push(current);
      current = [];
      parts = 0;
    }
    current.push(key);
    if (isPartKey(key)) parts++;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** One batch of keys, read as the source's driver stores them and written in one commit. */
async function copyBatch(source: Storage, target: Storage, keys: string[]): Promise<number> {
  const driver = source.getMount("").driver;
  const values = await Promise.all(
    keys.map(async (key) => {
      try {
        return (await driver.getItem(key, {})) as string | null;
      } catch (e) {
        // A Redis key of another type (a stream, a set) is not a record of the store.
        if (/WRONGTYPE/.test(String(e))) return null;
        throw e;
      }
    }),
  );
  const ops = keys.flatMap((key, i) => {
    const value = values[i];
    return value === null || value === undefined ? [] : [{ key, value: String(value) }];
  });
  if (ops.length > 0) await atomicBatch(target, ops);
  return ops.length;
}

/** A Redis store an instance runs on changes while it is copied: refused. */
async function refuseIfRunning(url: string): Promise<void> {
  const target = redisTarget(url);
  if (!target) return;
  const { Redis } = await import("ioredis");
  const redis = new Redis(target.url, { maxRetriesPerRequest: 2, lazyConnect: true });
  redis.on("error", () => {});
  try {
    await redis.connect();
    if (await storeInUse(redis, target.base)) {
      throw new Error(
        `storage copy: an instance is running on ${safe(url)}; stop it first, then copy`,
      );
    }
  } finally {
    redis.disconnect();
  }
}

/** A storage URL without its password, for messages. */
function safe(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "****";
    return u.toString();
  } catch {
    return url;
  }
}
