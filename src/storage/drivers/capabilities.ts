import type { Driver, Storage } from "unstorage";

/**
 * What a driver can do beyond unstorage's `Driver`, for the code above storage to ask of the
 * driver itself rather than guess from a storage URL or a driver's name. A driver that says
 * nothing can do none of it.
 */
export interface DriverCapabilities {
  /**
   * The Redis server the keys live on, and the prefix of every key: another client may change
   * them atomically there (the project kv's compare-and-set, shared by every instance).
   */
  redis?: { url: string; base: string };
  /**
   * Namespaces kept as one hash per entity rather than one key per entry (the store's format 2
   * moved them there).
   */
  hashed?: readonly string[];
  /**
   * Compare-and-set of one key's raw value on the server (PostgreSQL): writes `next` (removes
   * the key when null) only if the key still holds `expected` (absent when null); true if it did.
   * The project kv's documents change this way when several instances share the store.
   */
  swap?: (key: string, expected: string | null, next: string | null) => Promise<boolean>;
  /**
   * The keys `k` with `start <= k < end`, in order (newest last; first when `reverse`), at
   * most `limit`: one ordered walk of the engine's own index that stops when it has enough
   * (LMDB, memory, PostgreSQL). The session index pages through it (src/storage/index-range.ts);
   * a driver without it has its keys listed whole.
   */
  keyRange?: (range: KeyRange) => Promise<string[]>;
}

/** The bounds of `DriverCapabilities.keyRange`. */
export interface KeyRange {
  start: string;
  end: string;
  reverse?: boolean;
  limit?: number;
}

/** A driver that says what it can do. */
export type CapableDriver = Driver & { capabilities?: DriverCapabilities };

/**
 * What the driver under `storage` (its root mount) can do.
 * @example capabilitiesOf(createStorageFromUrl("memory:")) // {}
 */
export function capabilitiesOf(storage: Storage): DriverCapabilities {
  return (storage.getMount("").driver as CapableDriver).capabilities ?? {};
}
