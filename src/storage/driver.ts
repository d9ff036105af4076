import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createStorage, type Storage } from "unstorage";
import fsLite from "unstorage/drivers/fs-lite";
import memory from "unstorage/drivers/memory";
import redis from "unstorage/drivers/redis";
import { lmdbDriver } from "./drivers/lmdb.ts";
import { postgresDriver, postgresTarget } from "./drivers/postgres.ts";

/** The storage URLs the service takes, as the start-up error names them. */
export const SUPPORTED_STORAGE = "lmdb:<dir>, fs:<dir>, memory:, redis://…, postgres://…";

/** A URL scheme: a letter, then letters, digits, `+`, `-` or `.`, then a colon. */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const SCHEMES = ["memory", "lmdb", "fs", "redis", "rediss", "postgres", "postgresql"];

/**
 * Throws a one-line Error when `url` has a scheme no driver here takes (before, `postgres://…`
 * quietly became a folder named `postgres:`). A value without a scheme is an fs folder.
 * @example checkStorageUrl("mysql://db/x") // throws: SVC_STORAGE: unsupported storage …
 */
export function checkStorageUrl(url: string): void {
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || SCHEMES.includes(scheme)) return;
  throw new Error(`SVC_STORAGE: unsupported storage "${url}"; supported: ${SUPPORTED_STORAGE}`);
}

/** The Redis URL and key prefix of a `redis://…[?base=prefix]` storage URL, else null. */
export function redisTarget(url: string): { url: string; base: string } | null {
  if (!url.startsWith("redis://") && !url.startsWith("rediss://")) return null;
  const parsed = new URL(url);
  const base = parsed.searchParams.get("base") ?? "hookline";
  parsed.searchParams.delete("base");
  return { url: parsed.toString(), base };
}

/**
 * An unstorage `Storage` from a `SVC_STORAGE` value: `memory:`, `lmdb:<dir>` (an LMDB
 * environment in that folder, see docs/storage.md), `fs:<dir>` (or a bare path), or
 * `redis://…` (optionally `?base=<prefix>` to share one Redis between deployments), or
 * `postgres://…` (optionally `?table=<name>`, default `hookline_kv`). Throws a one-line Error
 * on any other scheme.
 * @example createStorageFromUrl("memory:")
 */
export function createStorageFromUrl(url: string): Storage {
  if (url === "memory:" || url === "memory") return createStorage({ driver: memory() });
  checkStorageUrl(url);
  const pg = postgresTarget(url);
  if (pg) return createStorage({ driver: postgresDriver(pg) });
  const target = redisTarget(url);
  if (target) return createStorage({ driver: redis(target) });
  if (url.startsWith("lmdb:")) {
    const path = url.slice(5);
    if (!path) throw new Error(`SVC_STORAGE: "${url}" names no folder`);
    return createStorage({ driver: lmdbDriver({ path }) });
  }
  const dir = url.startsWith("fs:") ? url.slice(3) : url;
  if (!dir) throw new Error(`SVC_STORAGE: "${url}" names no folder`);
  return createStorage({ driver: fsLite({ base: dir }) });
}

/** The top-level namespaces of `createStores`: folders of these names mark an fs-lite store. */
const FS_NAMESPACES = [
  "projects",
  "project-names",
  "webhooks",
  "builds",
  "deployments",
  "events",
  "sessions",
  "session-index",
  "logs",
  "journals",
];

/**
 * What `detectEngine` found in a data home, and the storage URL of each layout there.
 * @example { found: "fs", fs: "fs:/d/hookline/store", lmdb: "lmdb:/d/hookline/db" }
 */
export interface DetectedEngine {
  /** `fs`: only an fs-lite store; `lmdb`: only an LMDB one; `both`; `none`: neither yet. */
  found: "fs" | "lmdb" | "both" | "none";
  /** Where the default fs-lite store is (`<dataHome>/store`), as a storage URL. */
  fs: string;
  /** Where the LMDB store goes (`<dataHome>/db`, holding `data.mdb`), as a storage URL. */
  lmdb: string;
}

/**
 * Which embedded store a data home already holds: fs-lite's layout (namespace folders such as
 * `projects/` or `sessions/` directly under `<dataHome>/store`) or LMDB's (`<dataHome>/db/data.mdb`).
 * Reads the folders only; opens nothing.
 * @example detectEngine("/home/ada/.local/share/hookline").found // "fs" on an existing install
 */
export function detectEngine(dataHome: string): DetectedEngine {
  const fsDir = join(dataHome, "store");
  const lmdbDir = join(dataHome, "db");
  let hasFs = false;
  try {
    hasFs = readdirSync(fsDir, { withFileTypes: true }).some(
      (e) => e.isDirectory() && FS_NAMESPACES.includes(e.name),
    );
  } catch {
    hasFs = false; // no store folder, or not a folder
  }
  const hasLmdb = existsSync(join(lmdbDir, "data.mdb"));
  const found = hasFs && hasLmdb ? "both" : hasFs ? "fs" : hasLmdb ? "lmdb" : "none";
  return { found, fs: `fs:${fsDir}`, lmdb: `lmdb:${lmdbDir}` };
}
