import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Driver } from "unstorage";
import fsLite from "unstorage/drivers/fs-lite";

/** The folder of temporary files inside the store; never a key (keys are ids and namespaces). */
const TMP = ".hookline-tmp";

/**
 * unstorage's fs-lite driver with atomic writes. fs-lite writes a key's file in place (truncate,
 * then write): a read in between finds an empty file, so a record that exists reads as missing
 * (a session answered in a 202 would 404 for a moment). Here each write goes to a temporary file
 * in the store's own folder (`<base>/.hookline-tmp/`, on the same filesystem so the rename is
 * atomic even when `<base>` is a mount point, and left out of what `getKeys` lists) and is
 * renamed over the key's file, which readers see whole or not at all.
 * @example createStorage({ driver: atomicFsLite({ base: "/var/lib/hookline/store" }) })
 */
export function atomicFsLite(opts: { base: string }): Driver {
  const base = resolve(opts.base);
  const tmpDir = join(base, TMP);
  const inner = fsLite({ base, ignore: (p: string) => basename(p) === TMP });
  const path = (key: string) => {
    if (/\.\.:|\.\.$/.test(key)) throw new Error(`[unstorage] invalid key ${JSON.stringify(key)}`);
    return join(base, key.replace(/:/g, "/"));
  };
  const write = async (key: string, value: string | Uint8Array) => {
    const target = path(key);
    await mkdir(dirname(target), { recursive: true });
    await mkdir(tmpDir, { recursive: true });
    const tmp = join(tmpDir, randomBytes(8).toString("hex"));
    try {
      await writeFile(tmp, value);
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  };
  return {
    ...inner,
    name: "fs-lite-atomic",
    setItem: (key: string, value: string) => write(key, value),
    setItemRaw: (key: string, value: unknown) => write(key, value as Uint8Array),
  };
}
