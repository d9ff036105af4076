import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Storage } from "unstorage";
import { parseStorageUrl } from "../storage-url.ts";
import { acceptLogDir } from "./accept-log.ts";
import { readAcceptLog } from "./accept-log-entry.ts";
import type { BatchDriver, BatchOp } from "./drivers/lmdb.ts";

/** Whether the process that wrote a log (named `<pid>-…`) is gone (or is this one, restarted). */
function writerGone(name: string): boolean {
  const pid = Number(name.split("-", 1)[0]);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** The logs in `dir`, by name (a process's files in the order it wrote them); none without it. */
function logFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith(".log"))
      .sort();
  } catch {
    return []; // no folder: nothing was logged
  }
}

/**
 * Commits each of `batches` unless it landed (a batch commits whole, so one of its keys present
 * says it did; a later change of them is then not undone). Resolves with how many it committed.
 * @example const n = await commitUnlanded(driver, readAcceptLog(file));
 */
export async function commitUnlanded(driver: BatchDriver, batches: BatchOp[][]): Promise<number> {
  let committed = 0;
  for (const ops of batches) {
    const landed = await Promise.all(
      ops.filter((op) => op.value !== null).map((op) => driver.hasItem(op.key, {})),
    );
    if (landed.some(Boolean)) continue;
    await driver.batch(ops);
    committed++;
  }
  return committed;
}

/**
 * At a start, before anything reads the store: the batches of each log whose process is gone
 * committed unless they landed then (`commitUnlanded`), and its file removed. Resolves with the
 * number of batches committed now.
 * @example const n = await replayAcceptLogs(acceptLogDir(dir), driver);
 */
export async function replayAcceptLogs(dir: string, driver: BatchDriver): Promise<number> {
  let replayed = 0;
  for (const name of logFiles(dir).filter(writerGone)) {
    replayed += await commitUnlanded(driver, readAcceptLog(join(dir, name)));
    unlinkSync(join(dir, name));
  }
  return replayed;
}

/**
 * Every batch the logs in `dir` hold now, of running processes and gone ones, the files left as
 * they are: what `cli backup` adds to its copy (a log removed meanwhile had landed: none).
 * @example const batches = loggedBatches(acceptLogDir(dir));
 */
export function loggedBatches(dir: string): BatchOp[][] {
  return logFiles(dir).flatMap((name) => {
    try {
      return readAcceptLog(join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
  });
}

/**
 * The accept logs of an `lmdb:` storage URL's store replayed into `storage` (see
 * `replayAcceptLogs`); 0 for any other store.
 * @example if (await replayAccepts(settings.storage, storage)) log.info("…");
 */
export function replayAccepts(url: string, storage: Storage): Promise<number> {
  const target = parseStorageUrl(url);
  if (target.kind !== "lmdb") return Promise.resolve(0);
  return replayAcceptLogs(acceptLogDir(target.dir), storage.getMount("").driver as BatchDriver);
}
