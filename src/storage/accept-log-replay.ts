import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Storage } from "unstorage";
import { parseStorageUrl } from "../storage-url.ts";
import { acceptLogDir, readAcceptLog } from "./accept-log.ts";
import type { BatchDriver } from "./drivers/lmdb.ts";

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

/**
 * At a start, before anything reads the store: each batch a gone process logged is committed
 * unless it landed then (a batch commits whole, so one of its keys present says it did; a
 * later change of them is then not undone), and its file removed. Resolves with the number of
 * batches committed now.
 * @example const n = await replayAcceptLogs(acceptLogDir(dir), driver);
 */
export async function replayAcceptLogs(dir: string, driver: BatchDriver): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".log") && writerGone(n));
  } catch {
    return 0; // no folder: nothing was logged
  }
  let replayed = 0;
  for (const name of names.sort()) {
    for (const ops of readAcceptLog(join(dir, name))) {
      const landed = await Promise.all(
        ops.filter((op) => op.value !== null).map((op) => driver.hasItem(op.key, {})),
      );
      if (landed.some(Boolean)) continue;
      await driver.batch(ops);
      replayed++;
    }
    unlinkSync(join(dir, name));
  }
  return replayed;
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
