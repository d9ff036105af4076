import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Runs `fn` while holding a lock directory, so that two processes (a service and a test run, or
 * two test workers) never build the same thing at once. A lock whose owner has died is taken over.
 * @example await withDirLock(`${venvDir}.lock`, () => createVenv(venvDir));
 */
export async function withDirLock<T>(
  path: string,
  fn: () => Promise<T>,
  timeoutMs = 15 * 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await mkdir(path);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      if (await isStale(path)) {
        await rm(path, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${path}`);
      // Only taken while a venv is built, so waiting with a short sleep costs nothing.
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    await writeFile(join(path, "pid"), String(process.pid));
    return await fn();
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}

async function isStale(path: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number(await readFile(join(path, "pid"), "utf8"));
  } catch {
    // The owner made the directory but has not written its pid yet, or died in between.
    const made = await stat(path).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    return Date.now() - made > 10_000;
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}
