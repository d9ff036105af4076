import { createStorage, type Storage } from "unstorage";
import fsLite from "unstorage/drivers/fs-lite";
import memory from "unstorage/drivers/memory";
import redis from "unstorage/drivers/redis";

/**
 * An unstorage `Storage` from a `SVC_STORAGE` value: `memory:`, `fs:<dir>` (or a bare path), or
 * `redis://…` (optionally `?base=<prefix>` to share one Redis between deployments).
 * @example createStorageFromUrl("memory:")
 */
export function createStorageFromUrl(url: string): Storage {
  if (url === "memory:" || url === "memory") return createStorage({ driver: memory() });
  if (url.startsWith("redis://") || url.startsWith("rediss://")) {
    const parsed = new URL(url);
    const base = parsed.searchParams.get("base") ?? "hookline";
    parsed.searchParams.delete("base");
    return createStorage({ driver: redis({ url: parsed.toString(), base }) });
  }
  const dir = url.startsWith("fs:") ? url.slice(3) : url;
  if (!dir) throw new Error(`SVC_STORAGE: "${url}" names no folder`);
  return createStorage({ driver: fsLite({ base: dir }) });
}
