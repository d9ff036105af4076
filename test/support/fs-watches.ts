import type * as fs from "node:fs";
import { sep } from "node:path";

// The folders this process has an open `fs.watch` on: a test replaces `node:fs` with
// `watchesCounted(original)` (vi.mock) and asks `watchedUnder(dir)`. Only the watch calls are
// counted; every watch is the real one.

/** Path → watches open on it (a watch counts from `fs.watch` until its `close`). */
const open = new Map<string, number>();

function note(path: string, by: number): void {
  const n = (open.get(path) ?? 0) + by;
  if (n > 0) open.set(path, n);
  else open.delete(path);
}

/**
 * `node:fs` with `watch` counted: for `vi.mock("node:fs", …)`, whose factory runs before the
 * test file's imports (so it imports this module itself).
 * @example
 * vi.mock("node:fs", async (original) =>
 *   (await import("../test/support/fs-watches.ts")).watchesCounted(await original()));
 */
export function watchesCounted(real: typeof fs): typeof fs {
  const watch = ((path: fs.PathLike, ...rest: unknown[]) => {
    const w = (real.watch as (...a: unknown[]) => fs.FSWatcher)(path, ...rest);
    const key = String(path);
    note(key, 1);
    const close = w.close.bind(w);
    let closed = false;
    w.close = () => {
      if (!closed) note(key, -1);
      closed = true;
      close();
    };
    return w;
  }) as typeof fs.watch;
  // Both ways of importing it: `import { watch }` and the default `fs` object.
  const whole = (real as { default?: typeof fs }).default ?? real;
  return { ...real, watch, default: { ...whole, watch } } as typeof fs;
}

/**
 * The folders at or under `dir` with an open watch, sorted.
 * @example expect(watchedUnder(tmp)).toEqual([tmp]);
 */
export function watchedUnder(dir: string): string[] {
  return [...open.keys()].filter((p) => p === dir || p.startsWith(dir + sep)).sort();
}
