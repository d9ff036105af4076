import type { Storage } from "unstorage";
import { atomicBatch, type StorageOp } from "./drivers/batch.ts";
import { MIGRATIONS } from "./migrations/index.ts";

/**
 * The key that holds the store's format version, in the small `meta` namespace (on an `fs:`
 * data home the file `meta/format-version`). A store without it was written before versions
 * were kept: format 1.
 */
export const FORMAT_KEY = "meta:format-version";

/** The format this release writes; `MIGRATIONS` leads from each older one to it. */
export const FORMAT_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.to), 1);

/** The format of stores written before versions were kept. */
const UNVERSIONED = 1;

/**
 * The format version a store holds: its `meta:format-version`, else 1.
 * @example await readFormat(storage) // 2
 */
export async function readFormat(storage: Storage): Promise<number> {
  const raw = await storage.getItem(FORMAT_KEY);
  if (raw === null || raw === undefined) return UNVERSIONED;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`storage: ${FORMAT_KEY} holds "${raw}"`);
  return v;
}

/**
 * The write that stamps a store with `version`: the last op of every migration's commit.
 * @example atomicBatch(storage, [...ops, stampOp(2)])
 */
export const stampOp = (version: number): StorageOp => ({ key: FORMAT_KEY, value: version });

/**
 * Brings a store to this release's format before anything else reads it, one migration after
 * the other; each commits its changes and the new version together (one transaction on lmdb,
 * memory, postgres, one MULTI on redis), so a crash leaves the store at one version or the
 * next, never between, and the next start carries on. A store newer than this release is
 * refused, naming both versions; nothing is written to it.
 * A new, empty store is stamped with this release's version at once.
 * @example const { from, to } = await openFormat(storage); // { from: 1, to: 2 } on an old store
 */
export async function openFormat(storage: Storage): Promise<{ from: number; to: number }> {
  const from = await readFormat(storage);
  if (from > FORMAT_VERSION) {
    throw new Error(
      `storage format ${from} is newer than this release reads (format ${FORMAT_VERSION}): ` +
        "run the release that wrote it, or restore a backup made by this one (docs/operations.md)",
    );
  }
  if (from === UNVERSIONED && (await storage.getKeys()).length === 0) {
    // A new store (the listing runs once in a store's life: after it, the version is there).
    await atomicBatch(storage, [stampOp(FORMAT_VERSION)]);
    return { from: FORMAT_VERSION, to: FORMAT_VERSION };
  }
  let at = from;
  for (const m of MIGRATIONS) {
    if (m.to <= at) continue;
    await m.run(storage, stampOp(m.to));
    at = m.to;
  }
  return { from, to: FORMAT_VERSION };
}

/**
 * `openFormat` at start: says in one line what it migrated, and on a refusal closes the
 * storage before the error goes up (a Redis connection would keep the process alive).
 * @example await upgradeFormat(storage, log);
 */
export async function upgradeFormat(
  storage: Storage,
  log: { info(line: string): void },
): Promise<void> {
  try {
    const { from, to } = await openFormat(storage);
    if (from !== to) log.info(`storage: format ${from} upgraded to ${to}`);
  } catch (e) {
    await storage.dispose().catch(() => {});
    throw e;
  }
}
