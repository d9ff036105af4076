import { createHmac } from "node:crypto";
import { prefixStorage, type Storage } from "unstorage";
import { HooklineError } from "../errors.ts";
import { createSecretBox, sameSecret } from "../secrets.ts";
import { createStores } from "./records.ts";

/**
 * The store's own records, beside the data: the namespace `meta:` (this module keeps
 * `meta:key-check`; a store's format version lives beside it).
 */
export const META_NAMESPACE = "meta";
/** The key, inside `meta:`, of the secret key's check value. */
export const KEY_CHECK = "key-check";

/** What `meta:key-check` holds: an HMAC of a fixed text under the key, never the key itself. */
export interface KeyCheckRecord {
  algorithm: "hmac-sha256";
  value: string;
  created_at: string;
}

/** `written`: the store had no check value (new, or from before checks); `verified`: it matched. */
export type KeyCheckResult = "written" | "verified";

const CHECKED_TEXT = "hookline secret key check v1";
/** Sessions whose journals are read, at most, to find a sealed value in a store without a check. */
const MAX_SESSIONS_READ = 50;

/**
 * The check value of `key` as `meta:key-check` keeps it.
 * @example sameSecret(record.value, keyCheckValue(key))
 */
export function keyCheckValue(key: Buffer): string {
  return createHmac("sha256", key).update(CHECKED_TEXT).digest("hex");
}

function mismatch(what: string): HooklineError {
  return new HooklineError(
    "conflict",
    `SVC_SECRET_KEY does not match the key this store's sealed data was written with (${what}); ` +
      "start with the key the other instances use (or that wrote this data home), or a new store",
    { setting: "SVC_SECRET_KEY" },
  );
}

/**
 * A sealed value already in a store written before key checks, with what holds it: a secret
 * var first, else an activity result in the journal of a durable session still running.
 */
async function findSealed(storage: Storage): Promise<{ sealed: string; where: string } | null> {
  const stores = createStores(storage);
  const projects = await stores.projects.list();
  for (const doc of projects) {
    const v = doc.vars.find((x) => x.secret);
    if (v) return { sealed: v.value, where: `secret var ${doc.project.name}/${v.name}` };
  }
  let read = 0;
  for (const doc of projects) {
    for (const entry of await stores.sessionIndex.entries(doc.project.id, "running")) {
      if (read++ >= MAX_SESSIONS_READ) return null;
      for (const step of await stores.journals.list(entry.id)) {
        if (step.kind !== "activity") continue;
        const field = [step.result, step.error].find((f) => f?.startsWith("sealed:"));
        if (field) return { sealed: field.slice(7), where: `the journal of ${entry.id}` };
      }
    }
  }
  return null;
}

/**
 * Refuses a secret key other than the one the store's sealed data was written with. The first
 * start writes the key's check value into `meta:key-check`; later starts compare theirs. A
 * store from before checks: the check is written once a sealed value it already holds (a
 * secret var, else a running durable session's journal) opens with this key, and refused if it
 * does not; with no sealed value, any key is this store's key from now on. Two instances that
 * start on a new store at the same moment with different keys: the check is read back after
 * the write, which narrows the race to the moment between a write and its read.
 * @throws HooklineError `conflict` naming `SVC_SECRET_KEY`, with `extra.setting` "SVC_SECRET_KEY"
 * @example await checkSecretKey(storage, loadSecretKey(configHome)); // "written" | "verified"
 */
export async function checkSecretKey(storage: Storage, key: Buffer): Promise<KeyCheckResult> {
  const meta = prefixStorage(storage, META_NAMESPACE);
  const mine = keyCheckValue(key);
  const stored = await meta.getItem<KeyCheckRecord>(KEY_CHECK);
  if (stored) {
    if (!sameSecret(stored.value, mine)) throw mismatch("the check value kept in the store");
    return "verified";
  }
  const found = await findSealed(storage);
  if (found) {
    try {
      createSecretBox(key).open(found.sealed);
    } catch {
      throw mismatch(`${found.where} does not open with it`);
    }
  }
  const record: KeyCheckRecord = {
    algorithm: "hmac-sha256",
    value: mine,
    created_at: new Date().toISOString(),
  };
  await meta.setItem(KEY_CHECK, record);
  const back = await meta.getItem<KeyCheckRecord>(KEY_CHECK);
  if (!back || !sameSecret(back.value, mine))
    throw mismatch("another instance started with another key");
  return "written";
}
