import type { Driver, Storage } from "unstorage";
import { HooklineError } from "../errors.ts";

/** A storage call failed (disk full, read-only, Redis gone): the service answers 503, retry later. */
export class StorageUnavailable extends HooklineError {
  constructor(cause: unknown) {
    super("unavailable", "storage is unavailable; retry later");
    this.cause = cause;
  }
}

/**
 * The `Storage` methods that reach the engine: the one list every wrapper of a `Storage` goes
 * by. A failure of one means the store is not there, not that the caller erred. `getMount`
 * (atomic batches reach the driver through it) is not among them.
 */
export const STORAGE_CALLS = [
  "getItem",
  "getItems",
  "getItemRaw",
  "setItem",
  "setItems",
  "setItemRaw",
  "removeItem",
  "getKeys",
  "hasItem",
  "getMeta",
  "setMeta",
  "removeMeta",
  "clear",
] as const;

export type StorageCall = (typeof STORAGE_CALLS)[number];

/**
 * Told of each storage call once it settled: which, whether it succeeded, and when it began
 * (`performance.now()`). The observer's metrics and spans (src/observe/observer.ts).
 */
export type CallWatcher = (op: StorageCall, ok: boolean, t0: number) => void;

/**
 * A storage failure as the service reports it: `StorageUnavailable`, unless it already says.
 * @example try { await stores.sessions.commit(id, change); } catch (e) { throw toUnavailable(e); }
 */
export function toUnavailable(e: unknown): HooklineError {
  return e instanceof HooklineError ? e : new StorageUnavailable(e);
}

const rethrow = (e: unknown): never => {
  throw toUnavailable(e);
};

type Call = (...args: unknown[]) => Promise<unknown>;

/** One method: its failures `StorageUnavailable`; with `watch`, its end told (and timed). */
function guarded(storage: Storage, op: StorageCall, watch: CallWatcher | undefined): Call {
  const call = storage[op] as Call;
  if (!watch) {
    return (...args) => {
      try {
        return call.apply(storage, args).catch(rethrow);
      } catch (e) {
        return Promise.reject(toUnavailable(e));
      }
    };
  }
  return (...args) => {
    const t0 = performance.now();
    let result: Promise<unknown>;
    try {
      result = call.apply(storage, args);
    } catch (e) {
      watch(op, false, t0);
      return Promise.reject(toUnavailable(e));
    }
    return result.then(
      (value) => {
        watch(op, true, t0);
        return value;
      },
      (e: unknown) => {
        watch(op, false, t0);
        return rethrow(e);
      },
    );
  };
}

/**
 * The same storage, whose failures are `StorageUnavailable`: a webhook whose event could not be
 * stored answers 503 with `Retry-After` (never 202), and the next call tries storage again, so
 * the service recovers by itself when the disk or Redis comes back. `watch`, given, is told of
 * each call as it settles (metrics, slow-call spans). A plain object made once, no proxy: a
 * call costs one closure and, watched, two clock reads.
 * @example const stores = createStores(guardStorage(createStorageFromUrl("fs:/data/store"), observer.storageCall));
 */
export function guardStorage(storage: Storage, watch?: CallWatcher): Storage {
  const out: Record<string, unknown> = { ...storage };
  for (const op of STORAGE_CALLS) out[op] = guarded(storage, op, watch);
  out.getMount = guardedMounts(storage);
  return out as unknown as Storage;
}

/**
 * `getMount`, whose drivers' `batch` fails as `StorageUnavailable`: `atomicBatch` commits
 * through a mount's driver, past the methods above. One guard per driver, since `atomicBatch`
 * compares the drivers of its keys' mounts.
 */
function guardedMounts(storage: Storage): Storage["getMount"] {
  const drivers = new WeakMap<Driver, Driver>();
  const guardBatch = (driver: Driver): Driver =>
    new Proxy(driver, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (prop !== "batch" || typeof value !== "function") return value;
        return (...args: unknown[]) => (value as Call).apply(target, args).catch(rethrow);
      },
    });
  return (key?: string) => {
    // A store of one mount, as the service's always is, gives every key to it: the key is not
    // normalized again (unstorage's getMount does, some 0.5 µs a key, three keys a webhook).
    const mounts = storage.getMounts("");
    const mount =
      mounts.length === 1 && mounts[0]!.base === "" ? mounts[0]! : storage.getMount(key);
    let driver = drivers.get(mount.driver);
    if (!driver) {
      driver = guardBatch(mount.driver);
      drivers.set(mount.driver, driver);
    }
    return { ...mount, driver };
  };
}
