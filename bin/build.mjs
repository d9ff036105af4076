#!/usr/bin/env node
// `npm run build`: compiles src/ and emulator/ into a new folder beside dist/ (`.dist-<stamp>`),
// then points dist/ at it with one rename of a symlink, so dist/ is never missing or half
// written while a build runs: a `cli` started meanwhile runs the previous build to its end.
//
// `--prepare` (npm's `prepare`, which `npm install` runs): builds, except under `npm exec` /
// `npx cli`, which installs this checkout into npx's cache to link its `cli` bin and runs
// `prepare` there: that never rebuilds the checkout (only a missing dist/ is built).
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, "dist");
const ENTRY = join("emulator", "cli.js");
const PREFIX = ".dist-";

if (process.argv.includes("--prepare") && process.env.npm_command === "exec") {
  if (existsSync(join(dist, ENTRY))) process.exit(0);
}
process.exit(build());

/** Compiles into a fresh folder and swaps it in; returns tsc's exit code. */
function build() {
  const stamp = Date.now().toString(36).padStart(9, "0");
  const next = join(root, `${PREFIX}${stamp}-${process.pid}`);
  const pkg = createRequire(import.meta.url).resolve("typescript/package.json");
  const tsc = join(dirname(pkg), "bin", "tsc");
  const args = [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", next];
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  const code = run.status ?? 1;
  // tsc emits despite type errors (`npm run typecheck` reports them): such a build is swapped
  // in too, as before; one that emitted nothing leaves dist/ as it was.
  if (!existsSync(join(next, ENTRY))) {
    rmSync(next, { recursive: true, force: true });
    console.error(`build: tsc emitted no ${ENTRY}; dist/ is unchanged`);
    return code || 1;
  }
  const previous = target();
  swap(basename(next));
  clean([basename(next), previous]);
  return code;
}

/** The folder dist/ points at, or null (missing, or a plain folder from an older build). */
function target() {
  try {
    return lstatSync(dist).isSymbolicLink() ? basename(readlinkSync(dist)) : null;
  } catch {
    return null;
  }
}

/** Points dist/ at `folder`: a new symlink renamed over the old one, which is atomic. */
function swap(folder) {
  const link = join(root, `${PREFIX}link-${process.pid}`);
  rmSync(link, { force: true });
  symlinkSync(folder, link, process.platform === "win32" ? "junction" : "dir");
  const stat = lstatSync(dist, { throwIfNoEntry: false });
  if (stat && !stat.isSymbolicLink()) {
    // A plain dist/ (built before builds were swapped in) cannot be replaced in one step: this
    // happens once per checkout.
    const old = join(root, `${PREFIX}old-${process.pid}`);
    renameSync(dist, old);
    renameSync(link, dist);
    rmSync(old, { recursive: true, force: true });
    return;
  }
  try {
    renameSync(link, dist);
  } catch (err) {
    if (process.platform !== "win32") throw err;
    rmSync(dist, { force: true }); // Windows renames nothing over a junction
    renameSync(link, dist);
  }
}

/**
 * Removes builds older than the two kept (the new one, and the one a running `cli` may still
 * import from). A build newer than them is another build still compiling: left alone.
 */
function clean(kept) {
  const stamps = kept.filter(Boolean).map((name) => name.slice(PREFIX.length));
  const oldest = stamps.sort()[0];
  for (const name of readdirSync(root)) {
    if (!name.startsWith(PREFIX) || kept.includes(name)) continue;
    const stamp = name.slice(PREFIX.length);
    const stale = /^[0-9a-z]{9}-/.test(stamp) ? stamp < oldest : /^(link|old)-/.test(stamp);
    if (stale && !isAlive(stamp)) rmSync(join(root, name), { recursive: true, force: true });
  }
}

/** Whether the build whose folder ends `-<pid>` (or is `link-<pid>`) is still running. */
function isAlive(stamp) {
  const pid = Number(stamp.split("-").at(-1));
  if (!pid || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
