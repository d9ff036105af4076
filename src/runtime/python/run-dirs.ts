import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The fork servers' socket folders live in the temp dir (a socket path must stay under ~100
// bytes, which a data home deep in a home folder can exceed). A SIGKILLed service cannot remove
// them, so each folder is named after its owner: `hookline-run-<pid>-<stamp>-XXXXXX`, the stamp
// being when that process started. The next start removes those whose owner is gone.

const PREFIX = "hookline-run-";
/** This process's start time, base 36: tells it from an earlier process with the same pid. */
const STAMP = Math.round(performance.timeOrigin).toString(36);
const NAME = /^hookline-run-(\d+)-([0-9a-z]+)-/;

/**
 * A new temp folder owned by this process, for a fork server's socket.
 * @example const dir = await makeRunDir(); // /tmp/hookline-run-4242-lq3x9k2p-Ab12Cd
 */
export function makeRunDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-${STAMP}-`));
}

/** Whether process `pid` exists (someone else's counts). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // someone else's: alive
  }
}

/**
 * Removes the run folders of processes that are gone: the pid is not running, or it is this
 * process's pid with another start stamp (a container restarts with the same pid). A live pid
 * of another process keeps its folders, even if the pid was reused: better a leftover than a
 * live server's socket removed. Returns how many were removed.
 * @example const removed = await removeStaleRunDirs(); // at start, before any fork server
 */
export async function removeStaleRunDirs(dir = tmpdir()): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    const stale = pid === process.pid ? m[2] !== STAMP : !alive(pid);
    if (!stale) continue;
    try {
      await rm(join(dir, name), { recursive: true, force: true });
      removed++;
    } catch {
      // Not ours to remove (another user's temp folder): leave it.
    }
  }
  return removed;
}
