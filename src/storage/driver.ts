import { createStorage, type Storage } from "unstorage";
import { parseStorageUrl } from "../storage-url.ts";
import { atomicFsLite } from "./atomic-fs.ts";
import { lmdbDriver } from "./drivers/lmdb.ts";
import { memoryDriver } from "./drivers/memory.ts";
import { postgresDriver, postgresTarget } from "./drivers/postgres.ts";
import { redisDriver } from "./drivers/redis.ts";

/** The Redis URL and key prefix of a `redis://…[?base=prefix]` storage URL, else null. */
export function redisTarget(url: string): { url: string; base: string } | null {
  if (!/^rediss?:\/\//i.test(url)) return null;
  const parsed = new URL(url);
  const base = parsed.searchParams.get("base") ?? "hookline";
  parsed.searchParams.delete("base");
  return { url: parsed.toString(), base };
}

/**
 * An unstorage `Storage` from a `SVC_STORAGE` value (see `parseStorageUrl`): `lmdb:<dir>` (an
 * LMDB environment in that folder, `?sync=normal` by default, see docs/storage.md), `fs:<dir>`
 * (or a bare path), `memory:`, `redis://…` (optionally `?base=<prefix>` to share one Redis
 * between deployments), or `postgres://…` (optionally `?table=<name>`, default `hookline_kv`). Throws a one-line Error on any other scheme.
 * @example createStorageFromUrl("memory:")
 */
export function createStorageFromUrl(url: string): Storage {
  const target = parseStorageUrl(url);
  switch (target.kind) {
    case "memory":
      return createStorage({ driver: memoryDriver() });
    case "redis":
      return createStorage({ driver: redisDriver(redisTarget(url)!) });
    case "postgres":
      return createStorage({ driver: postgresDriver(postgresTarget(url)!) });
    case "lmdb":
      return createStorage({ driver: lmdbDriver({ path: target.dir, sync: target.sync }) });
    case "fs":
      return createStorage({ driver: atomicFsLite({ base: target.dir }) });
  }
}

export { type DetectedEngine, detectEngine } from "../storage-url.ts";
