import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseStorageUrl } from "../storage-url.ts";
import { createStorageFromUrl } from "./driver.ts";
import { FORMAT_KEY, FORMAT_VERSION, readFormat } from "./format.ts";

/** How long `config where` waits for a network store before it says it could not read it. */
const READ_TIMEOUT_MS = 3000;

/**
 * The `storage format:` line of `cli config where`: the version the store holds (read, never
 * written: a data home not made yet stays unmade), and where, beside the one this release writes.
 * @example await formatLine("lmdb:/d/db") // "storage format: 2 (this release writes 2)"
 */
export async function formatLine(url: string): Promise<string> {
  const writes = `this release writes ${FORMAT_VERSION}`;
  const target = parseStorageUrl(url);
  if (target.kind === "memory") return `storage format: ${FORMAT_VERSION} (memory: ${writes})`;
  const where = target.kind === "fs" ? `  ${join(target.dir, ...FORMAT_KEY.split(":"))}` : "";
  if (target.kind === "lmdb" && !existsSync(join(target.dir, "data.mdb"))) {
    return `storage format: none yet (${writes})`;
  }
  if (target.kind === "fs" && !existsSync(target.dir)) {
    return `storage format: none yet (${writes})${where}`;
  }
  const storage = createStorageFromUrl(url);
  let timer: NodeJS.Timeout | undefined;
  try {
    const version = await Promise.race([
      readFormat(storage),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer in 3 s")), READ_TIMEOUT_MS);
      }),
    ]);
    const note = version > FORMAT_VERSION ? "newer than this release" : writes;
    return `storage format: ${version} (${note})${where}`;
  } catch (e) {
    return `storage format: not read: ${(e as Error).message.split("\n")[0]}`;
  } finally {
    clearTimeout(timer);
    await storage.dispose().catch(() => {});
  }
}
