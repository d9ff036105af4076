import { createStorage, type Storage } from "unstorage";
import fsLite from "unstorage/drivers/fs-lite";
import memory from "unstorage/drivers/memory";
import redis from "unstorage/drivers/redis";

/** The Redis URL and key prefix of a `redis://…[?base=prefix]` storage URL, else null. */
export function redisTarget(url: string): { url: string; base: string } | null {
  if (!url.startsWith("redis://") && !url.startsWith("rediss://")) return null;
  const parsed = new URL(url);
  const base = parsed.searchParams.get("base") ?? "hookline";
  parsed.searchParams.delete("base");
  return { url: parsed.toString(), base };
}

/**
 * An unstorage `Storage` from a `SVC_STORAGE` value: `memory:`, `fs:<dir>` (or a bare path), or
 * `redis://…` (optionally `?base=<prefix>` to share one Redis between deployments).
 * @example createStorageFromUrl("memory:")
 */
export function createStorageFromUrl(url: string): Storage {
  if (url === "memory:" || url === "memory") return createStorage({ driver: memory() });
  const target = redisTarget(url);
  if (target) return createStorage({ driver: redis(target) });
  const dir = url.startsWith("fs:") ? url.slice(3) : url;
  if (!dir) throw new Error(`SVC_STORAGE: "${url}" names no folder`);
  return createStorage({ driver: fsLite({ base: dir }) });
}
