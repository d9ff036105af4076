import { open, type RootDatabase } from "lmdb";
import type { Driver } from "unstorage";
import type { OwnerWrite } from "../fence.ts";
import type { CapableDriver, KeyRange } from "./capabilities.ts";

/**
 * One write of an atomic batch: a value to set, or `null` to remove the key.
 * @example const op: BatchOp = { key: "project-names:old", value: null };
 */
export interface BatchOp {
  key: string;
  value: string | null;
}

/**
 * A driver that can commit several writes all-or-nothing (see `atomicBatch` in ./batch.ts).
 * @example await driver.batch([{ key: "a:1", value: "1" }, { key: "a:2", value: null }]);
 */
export interface BatchDriver extends Driver {
  batch(ops: BatchOp[]): Promise<void>;
  /**
   * A session's batch carrying who may write it (PostgreSQL: checked in the same statement;
   * rejects `Fenced` or `StepClash` with nothing written). Drivers of one instance have none.
   */
  fenced?(ops: BatchOp[], own: OwnerWrite): Promise<void>;
}

/** @example lmdbDriver({ path: "/data/hookline/db", sync: "full" }) */
export interface LmdbDriverOptions {
  /** The folder holding `data.mdb` and `lock.mdb`; made if missing. */
  path: string;
  /**
   * `full` (the driver's default): a write returns once its commit is fsynced, so it survives a
   * power cut. `meta`: LMDB's noMetaSync, the data is fsynced before a write returns but the
   * commit record is not. `normal`: a write returns once committed (in the OS's page cache);
   * lmdb-js flushes it in the background (overlappingSync, with the commit record's fsync left
   * to the next flush), like SQLite's `synchronous=NORMAL`. With `meta` and `normal` an OS crash
   * or power cut may undo the last commits, never a part of one. A killed process loses nothing
   * that returned with any of them. The service's storage URL chooses `normal` unless told
   * `?sync=meta` or `?sync=full` (src/storage-url.ts, docs/storage.md).
   */
  sync?: LmdbSync;
}

/** How an LMDB commit reaches the disk before its write returns (see `LmdbDriverOptions`). */
export type LmdbSync = "full" | "meta" | "normal";

/**
 * LMDB's largest key, in bytes of UTF-8; longer keys are refused.
 * @example Buffer.byteLength(key) <= MAX_KEY_BYTES
 */
export const MAX_KEY_BYTES = 1978;

function checkKey(key: string): string {
  if (typeof key !== "string" || key.length === 0) {
    throw new Error(`lmdb driver: invalid key ${JSON.stringify(key)}`);
  }
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new Error(`lmdb driver: key longer than ${MAX_KEY_BYTES} bytes: ${key.slice(0, 60)}…`);
  }
  return key;
}

/**
 * Throws the error `batch` would for any op LMDB cannot take (a key too long, a value not a
 * string), before anything is written.
 * @example checkBatch([{ key: "a:1", value: "1" }]);
 */
export function checkBatch(ops: BatchOp[]): void {
  for (const op of ops) {
    checkKey(op.key);
    if (op.value !== null && typeof op.value !== "string") {
      throw new Error(`lmdb driver: value of ${op.key} is not a string`);
    }
  }
}

/**
 * The key range under an unstorage base (`"sessions"` or `"sessions:"`): from `sessions:` up to,
 * not including, `sessions;` (';' follows ':'), so listing is one ordered cursor walk.
 * @example prefixRange("logs") // { start: "logs:", end: "logs;" }
 */
export function prefixRange(base?: string): { start?: string; end?: string } {
  const trimmed = (base ?? "").replace(/:+$/, "");
  if (!trimmed) return {};
  return { start: `${trimmed}:`, end: `${trimmed};` };
}

/**
 * The keys of `DriverCapabilities.keyRange`. Reversed, lmdb-js walks from its `start`
 * (included) down to its `end` (left out): the bounds swap, a key equal to the upper bound is
 * skipped and one equal to the lower added.
 */
function walkKeys(db: RootDatabase<string, string>, range: KeyRange): string[] {
  const { start, end, reverse, limit = Number.POSITIVE_INFINITY } = range;
  const out: string[] = [];
  const walk = reverse ? { start: end, end: start, reverse } : { start, end };
  for (const key of db.getKeys(walk)) {
    if (out.length >= limit) return out;
    if (key !== end) out.push(key);
  }
  if (reverse && out.length < limit && start < end && db.doesExist(start)) out.push(start);
  return out;
}

/**
 * An unstorage driver over one LMDB environment (lmdb-js). Values are the strings unstorage
 * hands a driver, stored as UTF-8; keys sort by their UTF-8 bytes, so a base's keys are one
 * range. Writes run on lmdb-js's writer thread, and writes made in the same event-loop turn
 * share one commit. Several processes may open the same folder.
 *
 * @example
 * const storage = createStorage({ driver: lmdbDriver({ path: "/var/lib/hookline/db" }) });
 * await storage.setItem("projects:prj_1", { name: "shop" });
 * await storage.getKeys("projects"); // ["projects:prj_1"]
 */
export function lmdbDriver(options: LmdbDriverOptions): BatchDriver & CapableDriver {
  if (!options.path) throw new Error("lmdb driver: `path` is required");
  let db: RootDatabase<string, string> | undefined;
  // Opened on first use, so that making a Storage touches no disk.
  const env = () => {
    db ??= open<string, string>({
      path: options.path,
      encoding: "string",
      noSubdir: false,
      // On, lmdb-js resolves a write at its commit and fsyncs after, off the write lock (an OS
      // crash can then undo writes that had returned); off, the fsync comes first.
      overlappingSync: options.sync === "normal",
      noMetaSync: options.sync === "meta" || options.sync === "normal",
    });
    return db;
  };
  const keysIn = (base?: string): string[] => {
    const out: string[] = [];
    for (const key of env().getKeys(prefixRange(base))) out.push(key);
    return out;
  };
  return {
    name: "lmdb",
    options,
    capabilities: { keyRange: async (range) => walkKeys(env(), range) },
    getInstance: env,
    hasItem: (key) => env().doesExist(checkKey(key)),
    getItem: (key) => env().get(checkKey(key)) ?? null,
    async setItem(key, value) {
      await env().put(checkKey(key), value);
    },
    async removeItem(key) {
      await env().remove(checkKey(key));
    },
    getKeys: (base) => keysIn(base),
    async clear(base) {
      const db = env();
      if (!prefixRange(base).start) {
        await db.clearAsync();
        return;
      }
      await db.childTransaction(() => {
        for (const key of keysIn(base)) db.remove(key);
      });
    },
    async dispose() {
      const closing = db;
      db = undefined;
      await closing?.close();
    },
    /**
     * Commits every op or none. Each op is checked first, so nothing in JavaScript can fail
     * once the first is queued; then all are queued as one block of the next write
     * transaction, which the writer thread runs without calling back into JavaScript. An op the
     * engine refuses there aborts that whole transaction (lmdb-js's writer: any error but
     * "not found" aborts it). A child transaction would do the same at two more thread
     * handoffs per commit, which a busy machine makes the slowest part of an accept.
     */
    async batch(ops) {
      checkBatch(ops);
      if (ops.length === 0) return;
      const db = env();
      await db.batch(() => {
        for (const op of ops) {
          if (op.value === null) db.remove(op.key);
          else db.put(op.key, op.value);
        }
      });
    },
  };
}
