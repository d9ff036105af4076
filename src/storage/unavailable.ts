import type { Storage } from "unstorage";
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

/**
 * A storage failure as the service reports it: `StorageUnavailable`, unless it already says.
 * @example try { await stores.sessions.commit(id, change); } catch (e) { throw toUnavailable(e); }
 */
export function toUnavailable(e: unknown): HooklineError {
  return e instanceof HooklineError ? e : new StorageUnavailable(e);
}

/**
 * The same storage, whose failures are `StorageUnavailable`: a webhook whose event could not be
 * stored answers 503 with `Retry-After` (never 202), and the next call tries storage again, so
 * the service recovers by itself when the disk or Redis comes back.
 * @example const stores = createStores(guardStorage(createStorageFromUrl("fs:/data/store")));
 */
export function guardStorage(storage: Storage): Storage {
  return new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || !GUARDED.has(prop)) return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(target, args);
          return result instanceof Promise
            ? result.catch((e: unknown) => {
                throw toUnavailable(e);
              })
            : result;
        } catch (e) {
          throw toUnavailable(e);
        }
      };
    },
  });
}
