import { type Driver, normalizeKey, type Storage } from "unstorage";
import type { OwnerWrite } from "../fence.ts";
import type { BatchDriver } from "./lmdb.ts";

/**
 * One write of `atomicBatch`: a value as `setItem` takes it, or `null` to remove the key.
 * @example const op: StorageOp = { key: `projects:${id}`, value: doc };
 */
export interface StorageOp {
  key: string;
  value: unknown;
}

/**
 * How `atomicBatch` committed: in one step, or one write after the other.
 * @example if ((await atomicBatch(storage, ops)) === "sequential") log.debug("not atomic here");
 */
export type BatchMode = "atomic" | "sequential";

/**
 * The string unstorage would store for `value` (its own `stringify` is not exported): a string
 * as it is, anything else as JSON.
 * @example storedText({ id: "ses_1" }) // '{"id":"ses_1"}'
 */
export function storedText(value: unknown): string {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) {
    return String(value);
  }
  const json = JSON.stringify(value);
  if (json === undefined) throw new Error("atomicBatch: cannot stringify a value");
  return json;
}

/**
 * The value unstorage's `getItem` would give for a stored `text` (read by other means, such as
 * a statement that reads keys beside its own work): JSON parsed, any other text as it is, null
 * for none.
 * @example parseStored('{"id":"ses_1"}') // { id: "ses_1" }
 */
export function parseStored(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What `normalizeKey` changes: a `?`, a slash, an empty part, a colon at either end. */
const NOT_NORMAL = /[?/\\]|::|^:|:$/;

/**
 * unstorage's `normalizeKey`, skipping its four passes over a key already in its form (every
 * key the records make: some 0.7 µs a key, four keys an accepted webhook).
 * @example normalKey("sessions:ses_1") // "sessions:ses_1", as it came
 */
export function normalKey(key: string): string {
  return key && !NOT_NORMAL.test(key) ? key : normalizeKey(key);
}

const hasBatch = (driver: Driver): driver is BatchDriver =>
  typeof (driver as Partial<BatchDriver>).batch === "function";

/**
 * Sets and removes several keys of `storage` in one commit where its driver can: a driver with
 * a `batch` method (lmdb, memory, redis, postgres). Elsewhere (fs-lite), or when the keys fall under
 * different mounts, it writes them one after the other and a crash can leave a part. `own`: who
 * may write the session (see OwnerWrite), checked by a driver that keeps owners. Keys
 * are full keys of `storage` (`projects:prj_1`), values as `setItem` takes them.
 *
 * @example
 * await atomicBatch(storage, [
 *   { key: "project-names:shop", value: doc.project.id },
 *   { key: `projects:${doc.project.id}`, value: doc },
 *   { key: "project-names:old-name", value: null },
 * ]); // "atomic" on lmdb, memory and redis
 */
export async function atomicBatch(
  storage: Storage,
  ops: StorageOp[],
  own?: OwnerWrite,
): Promise<BatchMode> {
  const resolved = ops.map((op) => {
    const key = normalKey(op.key);
    if (!key) throw new Error(`atomicBatch: invalid key ${JSON.stringify(op.key)}`);
    const mount = storage.getMount(key);
    const value = op.value === null || op.value === undefined ? null : storedText(op.value);
    return { key, value, mount, relative: key.slice(mount.base.length) };
  });
  // No key, but an owner row to make or check: the root mount's driver decides.
  const driver = resolved[0]?.mount.driver ?? (own ? storage.getMount("").driver : undefined);
  if (!driver) return "atomic";
  if (resolved.every((r) => r.mount.driver === driver)) {
    const batchOps = resolved.map((r) => ({ key: r.relative, value: r.value }));
    if (hasBatch(driver)) {
      // Who may write the session, where the driver decides it (a fleet's PostgreSQL).
      if (own && driver.fenced) await driver.fenced(batchOps, own);
      else await driver.batch(batchOps);
      return "atomic";
    }
  }
  for (const r of resolved) {
    if (r.value === null) await storage.removeItem(r.key);
    else await storage.setItem(r.key, r.value);
  }
  return "sequential";
}
