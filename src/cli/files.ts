import { existsSync } from "node:fs";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CliError } from "./io.ts";

/** The most a deploy uploads, in bytes, all files together. */
export const MAX_DEPLOY_BYTES = 16 * 1024 * 1024;

/**
 * Names a deploy leaves out: dot files and folders, Python's and the runner's caches,
 * node_modules. The dev loop's watcher ignores the same names.
 * @example isSkippedName("__pycache__") // true
 */
export function isSkippedName(name: string): boolean {
  return name.startsWith(".") || SKIPPED.has(name);
}

const SKIPPED = new Set(["__pycache__", "__hookline_cache__", "node_modules"]);

export interface CollectOptions {
  /** The folder whose files are uploaded; keys are paths relative to it. */
  root: string;
  /** Left out of the upload (it travels as `manifest`). */
  manifest: string;
  /** Exactly these files (or folders), instead of all of `root`. Relative to `cwd`, else `root`. */
  files?: string[];
  cwd?: string;
  maxBytes?: number;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

function toPosix(path: string): string {
  return path.split(sep).join("/");
}

/**
 * The files of a deploy as base64, keyed by POSIX path relative to the root. Skips dot files and
 * folders, `__pycache__`, `node_modules` and the manifest; never follows a link out of the root.
 * @example await collectFiles({ root: "demo", manifest: "demo/manifest.yaml" }) // { "handlers.py": "…" }
 */
export async function collectFiles(opts: CollectOptions): Promise<Record<string, string>> {
  const cwd = opts.cwd ?? process.cwd();
  const root = await realpath(resolve(cwd, opts.root)).catch(() => {
    throw new CliError(`cannot read folder ${opts.root}: not found`);
  });
  const manifest = await realpath(resolve(cwd, opts.manifest)).catch(() => resolve(opts.manifest));
  const max = opts.maxBytes ?? MAX_DEPLOY_BYTES;
  const found = new Map<string, string>(); // relative path → real path
  const seenDirs = new Set<string>();

  async function walk(dir: string): Promise<void> {
    if (seenDirs.has(dir)) return;
    seenDirs.add(dir);
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (isSkippedName(entry.name)) continue;
      const path = join(dir, entry.name);
      const real = await realpath(path).catch(() => undefined);
      if (!real || !inside(root, real)) continue; // a dangling link or one that leaves the root
      const info = await stat(real);
      if (info.isDirectory()) await walk(real);
      else if (info.isFile() && real !== manifest) found.set(toPosix(relative(root, path)), real);
    }
  }

  if (opts.files && opts.files.length > 0) {
    for (const given of opts.files) {
      const fromCwd = resolve(cwd, given);
      const path = isAbsolute(given) || existsSync(fromCwd) ? fromCwd : resolve(root, given);
      const parent = await realpath(dirname(path)).catch(() => dirname(path));
      const logical = join(parent, basename(path));
      const real = await realpath(logical).catch(() => {
        throw new CliError(`cannot read ${given}: no such file`);
      });
      if (!inside(root, logical) || !inside(root, real)) {
        throw new CliError(`${given} is outside the project folder ${opts.root}`);
      }
      const info = await stat(real);
      if (info.isDirectory()) await walk(real);
      else if (real !== manifest) found.set(toPosix(relative(root, logical)), real);
    }
  } else {
    await walk(root);
  }

  const files: Record<string, string> = {};
  let total = 0;
  for (const [key, real] of found) {
    total += (await stat(real)).size;
    if (total > max) {
      throw new CliError(
        `the files to deploy are larger than the ${max / 1024 / 1024} MiB limit (at ${key}); use --file or --dir to send less`,
      );
    }
    files[key] = (await readFile(real)).toString("base64");
  }
  return files;
}
