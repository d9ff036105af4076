import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { createSecretBox, sameSecret } from "../secrets.ts";
import { parseStorageUrl } from "../storage-url.ts";
import { acceptLogDir } from "./accept-log.ts";
import { commitUnlanded, loggedBatches } from "./accept-log-replay.ts";
import { lmdbDriver } from "./drivers/lmdb.ts";
import { FORMAT_KEY, FORMAT_VERSION } from "./format.ts";
import { KEY_CHECK, type KeyCheckRecord, keyCheckValue, META_NAMESPACE } from "./key-check.ts";

// `cli backup` and `cli restore` of the embedded store (LMDB). A backup is one file: LMDB's own
// copy of the environment, compacted, made in a read transaction, so it is consistent while
// the service writes. docs/operations.md says what else to back up and how.

/** The LMDB folder of a storage URL, or a one-line refusal for the other engines. */
function lmdbDir(url: string, verb: "back up" | "restore"): string {
  const target = parseStorageUrl(url);
  if (target.kind === "lmdb") return target.dir;
  const how: Record<string, string> = {
    fs: `stop the service and copy the folder ${"dir" in target ? target.dir : ""}`,
    redis: "use Redis's own tools (an RDB snapshot, BGSAVE)",
    postgres: "use pg_dump",
    memory: "a memory store keeps nothing",
  };
  throw new Error(
    `cli ${verb === "back up" ? "backup" : "restore"} works on the embedded lmdb store; ` +
      `this one is ${target.kind}: ${how[target.kind]} (docs/operations.md)`,
  );
}

const openEnv = (dir: string, readOnly = false) =>
  open<string, string>({ path: dir, encoding: "string", noSubdir: false, readOnly });

/** Other live processes that have the environment open (its reader table names them). */
function otherUsers(db: RootDatabase<string, string>): number[] {
  db.readerCheck(); // drops the slots of processes that are gone
  const pids = [...db.readerList().matchAll(/^\s*(\d+)\s/gm)].map((m) => Number(m[1]));
  return [...new Set(pids)].filter((pid) => pid !== process.pid);
}

/**
 * Copies the store of `url` (lmdb) into `file`, compacted, while the service may be running,
 * with the webhooks its accept log holds whose commit had not landed in the copy (a service's
 * answer does not wait for its commit: docs/storage.md "The accept log"): the backup holds every
 * webhook answered before it began. Refuses an existing `file`. Returns the format version
 * copied and how many batches the log added.
 * @example await backupStore("lmdb:/d/hookline/db", "/backups/hookline.mdb")
 */
export async function backupStore(
  url: string,
  file: string,
): Promise<{ format: number; fromLog: number }> {
  const dir = lmdbDir(url, "back up");
  if (!existsSync(join(dir, "data.mdb"))) throw new Error(`backup: no store at ${dir} to copy`);
  if (existsSync(file)) throw new Error(`backup: ${file} exists; give a new file name`);
  // Read before the copy: a batch answered before now is in the copy or still in its log (a
  // log is emptied only after its batches landed).
  const logged = loggedBatches(acceptLogDir(dir));
  // LMDB writes its copy as data.mdb into an empty folder: one beside the target, renamed.
  const work = mkdtempSync(join(dirname(file), ".hookline-backup-"));
  const db = openEnv(dir, true);
  try {
    const format = Number(db.get(FORMAT_KEY) ?? 1);
    await db.backup(work, true);
    const copy = lmdbDriver({ path: work, sync: "full" });
    let fromLog: number;
    try {
      fromLog = await commitUnlanded(copy, logged);
    } finally {
      await copy.dispose?.();
    }
    renameSync(join(work, "data.mdb"), file);
    return { format, fromLog };
  } finally {
    await db.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Sealed secrets in a store keep this shape (src/secrets.ts); journal values carry a prefix. */
const BOX = /^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/;
const SEALED_STEP = "sealed:"; // src/sessions/session-env.ts

/**
 * One value sealed with the key the store was written with: a secret var of a project, else an
 * activity result of a journal. Null when the store holds none (then any key opens it).
 */
function sealedSample(db: RootDatabase<string, string>): string | null {
  for (const { value } of db.getRange({ start: "projects:", end: "projects;" })) {
    const doc = JSON.parse(value) as { vars?: { secret?: boolean; value?: string }[] };
    const v = doc.vars?.find((x) => x.secret && BOX.test(x.value ?? ""));
    if (v?.value) return v.value;
  }
  for (const { value } of db.getRange({ start: "journals:", end: "journals;" })) {
    // A part of a value kept apart is its sealed text as it is, not JSON.
    if (value.startsWith(SEALED_STEP)) return value.slice(SEALED_STEP.length);
    const step = JSON.parse(value) as { result?: string; error?: string };
    const sealed = [step.result, step.error].find((s) => s?.startsWith(SEALED_STEP));
    if (sealed) return sealed.slice(SEALED_STEP.length);
  }
  return null;
}

/**
 * Whether a service started with `key` would take the store: its key check record
 * (src/storage/key-check.ts) matches the key; without one, a sealed value opens with it. A store
 * with neither takes any key; one with either takes no missing key.
 * @example keyOpens(db, key) // false with another SVC_SECRET_KEY
 */
export function keyOpens(db: RootDatabase<string, string>, key: Buffer | null): boolean {
  const check = db.get(`${META_NAMESPACE}:${KEY_CHECK}`);
  if (check !== undefined) {
    const record = JSON.parse(check) as KeyCheckRecord;
    return key !== null && sameSecret(record.value, keyCheckValue(key));
  }
  const sample = sealedSample(db);
  if (sample === null) return true;
  if (!key) return false;
  try {
    createSecretBox(key).open(sample);
    return true;
  } catch {
    return false;
  }
}

/** LMDB's magic number, at byte 24 of its first meta page. */
const LMDB_MAGIC = 0xbeefc0de;

/** Whether `file` starts as an LMDB data file does (LMDB must not be handed other bytes). */
function looksLikeLmdb(file: string): boolean {
  const head = Buffer.alloc(32);
  const fd = openSync(file, "r");
  try {
    return readSync(fd, head, 0, 32, 0) === 32 && head.readUInt32LE(24) === LMDB_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/**
 * Puts the backup `file` in place as the store of `url` (lmdb). Refuses, changing nothing: a
 * file that is no backup, a format newer than this release, a `key` (null: none here) the
 * backup's store would refuse at a start (`keyOpens`), a store that another process has open,
 * and a store that holds data unless `force` (the old folder is then kept beside it,
 * `db.before-restore-<time>`).
 * @example await restoreStore("/backups/hookline.mdb", "lmdb:/d/hookline/db", { key, force: false })
 */
export async function restoreStore(
  file: string,
  url: string,
  opts: { key: Buffer | null; force: boolean },
): Promise<{ format: number; keptAside: string | null }> {
  const dir = lmdbDir(url, "restore");
  if (!existsSync(file)) throw new Error(`restore: ${file} does not exist`);
  if (!looksLikeLmdb(file)) throw new Error(`restore: ${file} is not a Hookline backup`);
  // Checked on a copy in a folder of its own: opening the file would write a lock beside it.
  const check = mkdtempSync(join(tmpdir(), "hookline-restore-"));
  try {
    copyFileSync(file, join(check, "data.mdb"));
    let format: number;
    let opens: boolean;
    let db: RootDatabase<string, string> | undefined;
    try {
      db = openEnv(check, true);
      format = Number(db.get(FORMAT_KEY) ?? 1);
      opens = keyOpens(db, opts.key);
    } catch (e) {
      throw new Error(`restore: ${file} is not a Hookline backup (${(e as Error).message})`);
    } finally {
      await db?.close();
    }
    if (!Number.isInteger(format) || format > FORMAT_VERSION) {
      throw new Error(
        `restore: the backup is storage format ${format}, newer than this release reads (format ${FORMAT_VERSION})`,
      );
    }
    if (!opens) {
      const why =
        opts.key === null
          ? "the backup was written with a secret key and none is set here (SVC_SECRET_KEY or the config home's secret.key)"
          : "the backup's secrets do not open with this SVC_SECRET_KEY (or the config home's secret.key)";
      throw new Error(`restore: ${why}: set the key the backup was made with; nothing was changed`);
    }
    const keptAside = await clearTarget(dir, opts.force);
    mkdirSync(dirname(dir), { recursive: true });
    const staged = `${dir}.restoring-${process.pid}`;
    rmSync(staged, { recursive: true, force: true });
    mkdirSync(staged);
    copyFileSync(join(check, "data.mdb"), join(staged, "data.mdb"));
    renameSync(staged, dir);
    return { format, keptAside };
  } finally {
    rmSync(check, { recursive: true, force: true });
  }
}

/** Makes room for the restored folder at `dir`, or refuses (see `restoreStore`). */
async function clearTarget(dir: string, force: boolean): Promise<string | null> {
  if (!existsSync(dir)) return null;
  let keys = 0;
  let users: number[] = [];
  if (existsSync(join(dir, "data.mdb"))) {
    const lockWas = existsSync(join(dir, "lock.mdb"));
    const db = openEnv(dir, true);
    try {
      users = otherUsers(db);
      for (const _ of db.getKeys({ limit: 1 })) keys++;
    } finally {
      await db.close();
    }
    // Looking must leave the folder as it was: the lock file opening made goes again.
    if (!lockWas && users.length === 0) rmSync(join(dir, "lock.mdb"), { force: true });
  }
  if (users.length > 0) {
    throw new Error(
      `restore: ${dir} is open in process ${users.join(", ")} (a running service?); stop it first`,
    );
  }
  if (keys > 0 && !force) {
    throw new Error(
      `restore: ${dir} holds a store already; restore into a fresh data home, or pass --force to replace it (kept aside)`,
    );
  }
  if (keys === 0) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  const aside = `${dir}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  renameSync(dir, aside);
  return aside;
}
