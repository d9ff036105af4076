import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeRunDir, removeStaleRunDirs } from "./run-dirs.ts";

describe("run folders", () => {
  let dir = "";
  const saved = process.env.TMPDIR;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "hookline-rundirs-"));
    process.env.TMPDIR = dir; // os.tmpdir() reads it on every call
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it("removes the folders of processes that are gone, and only those", async () => {
    const mine = await makeRunDir();
    expect(basename(mine)).toMatch(new RegExp(`^hookline-run-${process.pid}-[0-9a-z]+-`));
    // A pid that ran and exited.
    const dead = Number(execFileSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).trim());
    const gone = join(dir, `hookline-run-${dead}-abc-XXXXXX`);
    // This pid, but an earlier process (a container restarted with the same pid).
    const earlier = join(dir, `hookline-run-${process.pid}-old-XXXXXX`);
    // Alive (pid 1) and not ours: kept. Other names: not ours to judge.
    const live = join(dir, "hookline-run-1-abc-XXXXXX");
    const other = join(dir, "hookline-stores-fs-XXXXXX");
    for (const d of [gone, earlier, live, other]) mkdirSync(d);
    expect(await removeStaleRunDirs()).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(
      [basename(mine), basename(live), basename(other)].sort(),
    );
    expect(existsSync(mine)).toBe(true);
  });
});
