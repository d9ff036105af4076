import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isSkippedName } from "../src/cli/files.ts";
import { watchedUnder } from "../test/support/fs-watches.ts";
import { until } from "../test/support/until.ts";
import { FolderWatcher, serialRunner } from "./watch.ts";

// Which folders have a watch is read from the watch calls themselves (each one real).
vi.mock("node:fs", async (original) =>
  (await import("../test/support/fs-watches.ts")).watchesCounted(await original()),
);

let tmp: string;
let watcher: FolderWatcher | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "hookline-watch-"));
});

afterEach(async () => {
  watcher?.dispose();
  watcher = undefined;
  await rm(tmp, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A watcher on `tmp` whose bursts land in `bursts`; `next()` waits for the next one. */
async function watchTmp(debounceMs = 50) {
  const bursts: string[][] = [];
  let wake: (() => void) | undefined;
  watcher = await FolderWatcher.start({
    root: tmp,
    debounceMs,
    onChange: (paths) => {
      bursts.push(paths);
      wake?.();
    },
  });
  const next = (ms = 5000) =>
    new Promise<string[]>((ok, fail) => {
      const seen = bursts.length;
      const timer = setTimeout(() => fail(new Error(`no change within ${ms} ms`)), ms);
      wake = () => {
        if (bursts.length > seen) {
          clearTimeout(timer);
          ok(bursts[seen]!);
        }
      };
    });
  return { bursts, next };
}

describe("FolderWatcher", () => {
  it("reports a burst of saves once, with the changed paths, subfolders included", async () => {
    await mkdir(join(tmp, "lib"));
    await writeFile(join(tmp, "handlers.py"), "a = 1\n");
    const { bursts, next } = await watchTmp();
    const burst = next();
    await writeFile(join(tmp, "handlers.py"), "a = 2\n");
    await writeFile(join(tmp, "lib", "util.py"), "b = 1\n");
    await writeFile(join(tmp, "handlers.py"), "a = 3\n");
    expect(await burst).toEqual(["handlers.py", "lib/util.py"]);
    await sleep(200);
    expect(bursts).toHaveLength(1);
  });

  it("watches folders made after it started", async () => {
    const { next } = await watchTmp();
    const made = next();
    await mkdir(join(tmp, "pkg"));
    expect(await made).toEqual(["pkg"]);
    // The new folder's watch is set up on its own event: waited for, not a set time slept.
    await until("the new folder to be watched", () => watchedUnder(tmp).length === 2, 10_000);
    const inside = next();
    await writeFile(join(tmp, "pkg", "mod.py"), "x = 1\n");
    expect(await inside).toEqual(["pkg/mod.py"]);
  });

  it("ignores what a deploy skips: dot files and folders, caches, node_modules", async () => {
    await mkdir(join(tmp, ".venv", "lib"), { recursive: true });
    await mkdir(join(tmp, "__pycache__"));
    const { bursts, next } = await watchTmp();
    expect(watchedUnder(tmp)).toEqual([tmp]); // only the root: the skipped folders are not watched at all
    await writeFile(join(tmp, ".handlers.py.swp"), "x");
    await writeFile(join(tmp, "__pycache__", "handlers.cpython-311.pyc"), "x");
    await writeFile(join(tmp, ".venv", "lib", "site.py"), "x");
    await sleep(300);
    expect(bursts).toEqual([]);
    const real = next();
    await writeFile(join(tmp, "manifest.yaml"), "version: v2\n");
    expect(await real).toEqual(["manifest.yaml"]);
  });

  it("stops reporting once disposed, and disposing twice is harmless", async () => {
    const { bursts } = await watchTmp();
    watcher!.dispose();
    watcher!.dispose();
    await writeFile(join(tmp, "handlers.py"), "a = 1\n");
    await sleep(200);
    expect(bursts).toEqual([]);
  });

  it("knows the names a deploy skips", () => {
    expect(
      ["__pycache__", ".git", ".env", "node_modules", "__hookline_cache__"].map(isSkippedName),
    ).toEqual([true, true, true, true, true]);
    expect(isSkippedName("handlers.py")).toBe(false);
  });
});

describe("serialRunner", () => {
  it("runs one at a time and queues exactly one more run for any number of requests", async () => {
    let active = 0;
    let most = 0;
    let runs = 0;
    const gates: (() => void)[] = [];
    const runner = serialRunner(async () => {
      active++;
      most = Math.max(most, active);
      runs++;
      await new Promise<void>((r) => gates.push(r));
      active--;
    });
    runner.request();
    runner.request();
    runner.request();
    runner.request();
    await sleep(10);
    expect(runs).toBe(1);
    gates.shift()!();
    await sleep(10);
    expect(runs).toBe(2); // the three requests during the first run became one
    gates.shift()!();
    await runner.idle();
    expect(runs).toBe(2);
    expect(most).toBe(1);
    runner.request();
    await sleep(10);
    expect(runs).toBe(3);
    gates.shift()!();
    await runner.idle();
  });

  it("hands a failed run to onError and keeps serving requests", async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const runner = serialRunner(
      async () => {
        runs++;
        if (runs === 1) throw new Error("boom");
      },
      (e) => errors.push(e),
    );
    runner.request();
    await runner.idle();
    runner.request();
    await runner.idle();
    expect(runs).toBe(2);
    expect(errors).toHaveLength(1);
  });
});
