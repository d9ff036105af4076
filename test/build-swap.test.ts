import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./support/python.ts";

/**
 * `npm run build` (bin/build.mjs) and `npx cli`, on a copy of the checkout (its sources, bin/
 * and a link to node_modules): a build swaps dist/ in whole, so a `cli` started while it runs
 * finds one; `npx cli` with a fresh npm cache runs the checkout's build without rebuilding it.
 */
describe("the build and npx cli", () => {
  let copy = "";
  const entry = () => join(copy, "dist", "emulator", "cli.js");
  const builds = () => readdirSync(copy).filter((n) => /^\.dist-[0-9a-z]{9}-/.test(n));
  const build = () => execa("node", ["bin/build.mjs"], { cwd: copy, reject: false });

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "hookline-build-"));
    for (const part of [
      "package.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "bin",
      "src",
      "emulator",
    ]) {
      cpSync(join(repoRoot, part), join(copy, part), { recursive: true });
    }
    symlinkSync(join(repoRoot, "node_modules"), join(copy, "node_modules"), "dir");
    // A plain dist/ folder, as builds before the swap left it: the first build replaces it.
    cpSync(join(repoRoot, "dist"), join(copy, "dist"), { recursive: true, dereference: true });
  });
  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it("never leaves dist/ missing while it builds, and keeps two builds at most", async () => {
    const first = await build();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(lstatSync(join(copy, "dist")).isSymbolicLink()).toBe(true);
    const before = readlinkSync(join(copy, "dist"));

    // While a second build runs, dist/ is looked for again and again, and `cli` runs meanwhile.
    const second = build();
    let looks = 0;
    let missing = 0;
    const runs: Promise<{ exitCode?: number; stderr: string }>[] = [];
    let running = true;
    void second.finally(() => {
      running = false;
    });
    while (running) {
      looks++;
      if (!existsSync(entry())) missing++;
      if (looks % 200 === 1) {
        runs.push(execa("node", ["bin/cli.mjs", "--help"], { cwd: copy, reject: false }));
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    expect((await second).exitCode).toBe(0);
    expect(looks).toBeGreaterThan(100);
    expect(missing).toBe(0);
    for (const run of await Promise.all(runs)) expect(run.exitCode, run.stderr).toBe(0);
    expect(readlinkSync(join(copy, "dist"))).not.toBe(before);

    // A third build: the one before the last is removed, the last kept (a cli may still use it).
    expect((await build()).exitCode).toBe(0);
    expect(builds()).toHaveLength(2);
    expect(builds()).not.toContain(before);
  }, 180_000);

  it("npx cli with a fresh npm cache runs the checkout's build, without rebuilding it", async () => {
    const cache = mkdtempSync(join(tmpdir(), "hookline-npx-cache-"));
    try {
      const before = readlinkSync(join(copy, "dist"));
      const folders = builds();
      const npx = async () => {
        const started = performance.now();
        const r = await execa("npx", ["cli", "--help"], {
          cwd: copy,
          env: { npm_config_cache: cache, npm_config_update_notifier: "false" },
          reject: false,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        expect(r.stdout).toContain("USAGE cli deploy");
        return performance.now() - started;
      };
      const first = await npx();
      const later = await npx();
      expect(readlinkSync(join(copy, "dist"))).toBe(before);
      expect(builds()).toEqual(folders);
      // The first call only links the checkout into npx's cache: within twice a later call
      // (and a second more, for a busy machine); a rebuild alone takes several seconds.
      expect(first, `first ${first} ms, later ${later} ms`).toBeLessThan(2 * later + 1000);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  }, 120_000);
});
