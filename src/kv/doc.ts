import { HooklineError } from "../errors.ts";
import { sizeOf, type Wire } from "./values.ts";

/** One project's store: every key's value, and which keys are published. */
export interface StoreDoc {
  values: Record<string, Wire>;
  published: string[];
}

export interface StoreLimits {
  /** Bytes of one value's JSON (64 KiB). */
  maxValueBytes: number;
  /** Bytes of all keys and values of a project (1 MiB). */
  maxProjectBytes: number;
  /** Characters of a key (256). */
  maxKeyLength: number;
}

export const DEFAULT_LIMITS: StoreLimits = {
  maxValueBytes: 64 * 1024,
  maxProjectBytes: 1024 * 1024,
  maxKeyLength: 256,
};

/**
 * Applies a change to a project's document atomically; returns what `change` returned. A
 * change that returns `doc: null` writes nothing.
 */
export type Mutate = <T>(
  projectId: string,
  change: (doc: StoreDoc) => { doc: StoreDoc | null; result: T },
) => Promise<T>;

/** Where the documents live: read and changed atomically, per project. */
export interface DocAccess {
  mutate: Mutate;
  read(projectId: string): Promise<StoreDoc>;
  remove(projectId: string): Promise<void>;
  dispose(): Promise<void>;
}

/** The document of a project that has none yet. */
export const emptyDoc = (): StoreDoc => ({ values: {}, published: [] });

/**
 * Refuses a key that is not a non-empty string within the limit.
 * @example checkKey(DEFAULT_LIMITS, "hits") // passes; checkKey(DEFAULT_LIMITS, "") throws
 */
export function checkKey(limits: StoreLimits, key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > limits.maxKeyLength) {
    throw new HooklineError(
      "bad_request",
      `store: a key is a non-empty string of at most ${limits.maxKeyLength} characters`,
    );
  }
}

/**
 * The document with `key` set to `value` (null: removed, and unpublished), checked against the
 * limits: a change over them throws, so the document stays as it was.
 * @example withValue(DEFAULT_LIMITS, emptyDoc(), "hits", 1).values // { hits: 1 }
 */
export function withValue(
  limits: StoreLimits,
  doc: StoreDoc,
  key: string,
  value: Wire | null,
): StoreDoc {
  const values = { ...doc.values };
  if (value === null) {
    delete values[key];
    return { values, published: doc.published.filter((k) => k !== key) };
  }
  const size = sizeOf(value);
  if (size > limits.maxValueBytes) {
    throw new HooklineError(
      "too_large",
      `store: value of "${key}" is ${size} bytes, over the limit of ${limits.maxValueBytes} bytes per value`,
    );
  }
  values[key] = value;
  const total = Object.entries(values).reduce(
    (n, [k, w]) => n + Buffer.byteLength(k) + sizeOf(w),
    0,
  );
  if (total > limits.maxProjectBytes) {
    throw new HooklineError(
      "too_large",
      `store: setting "${key}" would make the project's store ${total} bytes, over the limit of ${limits.maxProjectBytes} bytes per project`,
    );
  }
  return { values, published: doc.published };
}
