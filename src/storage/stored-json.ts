import { parseStored, storedText } from "./drivers/batch.ts";

/**
 * A record's JSON text, exactly as the store keeps it (`storedText`, the text `atomicBatch` makes
 * of the object), made once by a caller that needs it twice: the front door stores a session's
 * record and event and hands the same text to the host. The type says what it parses to.
 */
export type StoredJson<T> = string & { readonly __parsesTo?: T };

/**
 * `value`'s stored text, made once.
 * @example const texts = { record: storedJson(record) }; await createSession(opts, record, { texts });
 */
export function storedJson<T extends object>(value: T): StoredJson<T> {
  return storedText(value) as StoredJson<T>;
}

/**
 * The record a stored text holds, as a read of the store gives it (`parseStored`).
 * @example const record = parseStoredJson(m.record); // a SessionRecord
 */
export function parseStoredJson<T>(text: StoredJson<T>): T {
  return parseStored(text) as T;
}
