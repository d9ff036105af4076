import type { Storage } from "unstorage";
import type { Metrics } from "./metrics.ts";
import type { Tracing } from "./tracing.ts";

/** The storage calls timed; `getMount` (atomic batches reach the driver through it) is not. */
const TIMED = new Set<string | symbol>([
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
  "clear",
]);

/**
 * The same storage, each call timed into `hookline_storage_operation_seconds` and, with
 * tracing on, a span for a call slower than the tracer's threshold. Keys never become labels.
 * @example const stores = createStores(guardStorage(observeStorage(storage, metrics, tracing)));
 */
export function observeStorage(storage: Storage, metrics: Metrics, tracing: Tracing | null) {
  return new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || !TIMED.has(prop)) return value;
      const op = String(prop);
      return (...args: unknown[]) => {
        const t0 = performance.now();
        const startedAt = Date.now();
        const done = (ok: boolean) => {
          const ms = performance.now() - t0;
          metrics.storageCall(op, ok, ms);
          tracing?.storageCall(op, startedAt, ms, ok);
        };
        const result = value.apply(target, args);
        if (!(result instanceof Promise)) {
          done(true);
          return result;
        }
        return result.then(
          (v: unknown) => {
            done(true);
            return v;
          },
          (e: unknown) => {
            done(false);
            throw e;
          },
        );
      };
    },
  });
}
