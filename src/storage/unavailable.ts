import type { Driver, Storage } from "unstorage";
import { HooklineError } from "../errors.ts";

/** A storage call failed (disk full, read-only, Redis gone): the service answers 503, retry later. */
export class StorageUnavailable extends HooklineError {
  constructor(cause: unknown) {
    super("unavailable", "storage is unavailable; retry later");
    this.cause = cause;
  }
}

/** Storage methods whose failure means the store is not there, not that the caller erred. */
const GUARDED = new Set<string | symbol>([
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
]);

function unavailable(e: unknown): HooklineError {
  return e instanceof HooklineError ? e : new StorageUnavailable(e);
}

/**
 * The same storage, whose failures are `StorageUnavailable`: a webhook whose event could not be
 * stored answers 503 with `Retry-After` (never 202), and the next call tries storage again, so
 * the service recovers by itself when the disk or Redis comes back.
 * @example const stores = createStores(guardStorage(createStorageFromUrl("fs:/data/store")));
 */
export function guardStorage(storage: Storage): Storage {
  // `atomicBatch` commits through a mount's driver, past the storage's own methods. One guard
  // per driver: it compares the drivers of its keys' mounts.
  const drivers = new WeakMap<object, Driver>();
  return guard(storage, GUARDED, (mount: ReturnType<Storage["getMount"]>) => {
    let driver = drivers.get(mount.driver);
    if (!driver) {
      driver = guard(mount.driver, BATCH);
      drivers.set(mount.driver, driver);
    }
    return { ...mount, driver };
  });
}

/** A driver's all-or-nothing commit (see `atomicBatch`). */
const BATCH = new Set<string | symbol>(["batch"]);

/** `target` whose `methods` throw `StorageUnavailable`; `getMount`'s answer passed through `mount`. */
function guard<T extends object>(
  target: T,
  methods: Set<string | symbol>,
  mount?: (m: ReturnType<Storage["getMount"]>) => ReturnType<Storage["getMount"]>,
): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value !== "function") return value;
      if (mount && prop === "getMount") return (key?: string) => mount(value.call(t, key));
      if (!methods.has(prop)) return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(t, args);
          return result instanceof Promise
            ? result.catch((e: unknown) => {
                throw unavailable(e);
              })
            : result;
        } catch (e) {
          throw unavailable(e);
        }
      };
    },
  });
}
